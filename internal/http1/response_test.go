package http1

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// parsed is a response read to its end, as a caller that caps the body would.
type parsed struct {
	*message
	body []byte
}

var errTooLarge = errors.New("reply too large")

// parse reads a response and its body of at most limit bytes; keep is the connection's
// fate once the body has been read to its end.
func parse(s string, limit int64) (*parsed, error) {
	br := bufio.NewReader(strings.NewReader(s))
	m, err := readResponse(br, false)
	if err != nil {
		return nil, err
	}
	if m.length > limit {
		return nil, fmt.Errorf("%w: Content-Length %d is over the %d-byte cap", errTooLarge, m.length, limit)
	}
	b, err := io.ReadAll(io.LimitReader(m.body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: over the %d-byte cap", errTooLarge, limit)
	}
	if !m.body.done() {
		return nil, errors.New("body not at its end")
	}
	return &parsed{m, b}, nil
}

func TestReadResponse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		status   int
		body     string
		keep     bool
		err      string // a substring of the error; "" for success
	}{
		{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", status: 200, body: "hello", keep: true},
		{name: "field names are case-insensitive", in: "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh: 2\r\nCONNECTION: Close\r\n\r\nhi", status: 200, body: "hi"},
		{name: "connection close among tokens", in: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: foo, close\r\n\r\n", status: 200},
		{name: "no reason, bare LF", in: "HTTP/1.1 404\nContent-Length: 1\n\nx", status: 404, body: "x", keep: true},
		{name: "chunked with extensions and trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5;name=value;x=\"q\"\r\nhello\r\nA \r\n, world!!!\r\n0;last\r\nX-Trailer: 1\r\nY: 2\r\n\r\n",
			status: 200, body: "hello, world!!!", keep: true},
		{name: "chunked upper-case field", in: "HTTP/1.1 200 OK\r\nTRANSFER-ENCODING: Chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", status: 200, body: "a", keep: true},
		{name: "chunked and content-length: not reusable", in: "HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n", status: 200, body: "a"},
		{name: "http/1.0 until close", in: "HTTP/1.0 200 OK\r\n\r\nall of it", status: 200, body: "all of it"},
		{name: "http/1.1 until close", in: "HTTP/1.1 502 Bad Gateway\r\n\r\n<html>", status: 502, body: "<html>"},
		{name: "http/1.0 with length", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok"},
		{name: "interim responses skipped", in: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n!", status: 200, body: "!", keep: true},
		{name: "204 has no body", in: "HTTP/1.1 204 No Content\r\n\r\n", status: 204, keep: true},
		{name: "obs-fold", in: "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n", status: 200, keep: true},
		{name: "equal repeated lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\nContent-Length: 1\r\n\r\nx", status: 200, body: "x", keep: true},

		{name: "empty", in: "", err: "unexpected EOF"},
		{name: "not http", in: "SSH-2.0-OpenSSH\r\n", err: "not an HTTP/1.x status line"},
		{name: "http/2 preface", in: "HTTP/2 200\r\n\r\n", err: "not an HTTP/1.x status line"},
		{name: "bad status code", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: "malformed status code"},
		{name: "short status code", in: "HTTP/1.1 20 OK\r\n\r\n", err: "malformed status code"},
		{name: "field without colon", in: "HTTP/1.1 200 OK\r\nContent-Length 5\r\n\r\nhello", err: "malformed header field"},
		{name: "space in field name", in: "HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\nhello", err: "malformed header field"},
		{name: "fold without field", in: "HTTP/1.1 200 OK\r\n x\r\n\r\n", err: "continuation"},
		{name: "head cut short", in: "HTTP/1.1 200 OK\r\nContent-Le", err: "unexpected EOF"},
		{name: "body cut short", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhello", err: "cut short: 5 of 10 bytes"},
		{name: "bad content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: 5x\r\n\r\nhello", err: "malformed Content-Length"},
		{name: "signed content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: +5\r\n\r\nhello", err: "malformed Content-Length"},
		{name: "negative content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", err: "malformed Content-Length"},
		{name: "differing content-lengths", in: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", err: "malformed Content-Length"},
		{name: "gzip", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", err: "unsupported Transfer-Encoding"},
		{name: "chunk size not hex", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", err: "malformed chunk size"},
		{name: "chunk size negative", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\nx\r\n0\r\n\r\n", err: "malformed chunk size"},
		{name: "chunk size 0x", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x1\r\nx\r\n0\r\n\r\n", err: "malformed chunk size"},
		{name: "chunk size empty", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n;ext\r\n", err: "malformed chunk size"},
		{name: "chunk size huge", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n", err: "malformed chunk size"},
		{name: "chunk size with space inside", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1 0\r\n", err: "malformed chunk size"},
		{name: "chunk longer than said", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n", err: "not followed by CRLF"},
		{name: "chunk cut short", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", err: "cut short"},
		{name: "no last chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", err: "cut short"},
		{name: "trailer cut short", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n", err: "trailer"},
		{name: "101", in: "HTTP/1.1 101 Switching Protocols\r\n\r\n", err: "switched protocols"},
		{name: "endless interim", in: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 20), err: "interim"},
		{name: "line too long", in: "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLineBytes) + "\r\n\r\n", err: "line longer than"},
		{name: "too many fields", in: "HTTP/1.1 200 OK\r\n" + strings.Repeat("X: 1\r\n", maxHeadFields+1) + "\r\n", err: "more than 100 header fields"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := parse(tc.in, 1<<20)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.status != tc.status || string(r.body) != tc.body || r.keep != tc.keep {
				t.Errorf("got %d %q keep=%v, want %d %q keep=%v", r.status, r.body, r.keep, tc.status, tc.body, tc.keep)
			}
		})
	}
}

func TestReadResponseHeaderLookup(t *testing.T) {
	r, err := parse("HTTP/1.1 200 OK\r\nX-Thing: a\r\nx-thing: b\r\nX-Fold: one\r\n\ttwo\r\nContent-Length: 0\r\n\r\n", 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.header.Get("X-THING"); got != "a, b" {
		t.Errorf("X-Thing = %q", got)
	}
	if got := r.header.Get("x-fold"); got != "one two" {
		t.Errorf("X-Fold = %q", got)
	}
}

// The cap holds whatever the framing, and says so.
func TestReadResponseCap(t *testing.T) {
	big := strings.Repeat("x", 101)
	for name, in := range map[string]string{
		"content-length": "HTTP/1.1 200 OK\r\nContent-Length: 101\r\n\r\n" + big,
		"lying length":   "HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n",
		"chunked":        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n32\r\n" + big[:50] + "\r\n33\r\n" + big[:51] + "\r\n0\r\n\r\n",
		"until close":    "HTTP/1.0 200 OK\r\n\r\n" + big,
	} {
		_, err := parse(in, 100)
		if !errors.Is(err, errTooLarge) || !strings.Contains(err.Error(), "100-byte cap") {
			t.Errorf("%s: err = %v, want the cap", name, err)
		}
	}
	// Exactly the cap is fine.
	if r, err := parse("HTTP/1.0 200 OK\r\n\r\n"+big[:100], 100); err != nil || len(r.body) != 100 {
		t.Errorf("at the cap: %v", err)
	}
}

// A long line spans several reads of the bufio.Reader.
func TestReadLineLong(t *testing.T) {
	v := strings.Repeat("v", 6000)
	r, err := parse("HTTP/1.1 200 OK\r\nX: "+v+"\r\nContent-Length: 0\r\n\r\n", 10)
	if err != nil || r.header.Get("x") != v {
		t.Fatalf("long field: %v", err)
	}
}

// FuzzReadResponse: the parser never panics, never hands over more than the body's
// framing says, and a response it accepts is a well-formed one.
func FuzzReadResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nrest",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 1, 1\r\n\r\nx",
	} {
		f.Add([]byte(s))
	}
	const limit = 1 << 12
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		m, err := readResponse(br, false)
		if err != nil {
			if m != nil {
				t.Fatal("a response with an error")
			}
			return
		}
		if m.status < 200 || m.status > 999 {
			t.Fatalf("status %d accepted", m.status)
		}
		if m.keep && (m.minor != 1 || m.header.hasToken("connection", "close")) {
			t.Fatal("keep-alive on a connection the server ends")
		}
		// Read in small steps, as a caller with a small buffer would.
		var body []byte
		buf := make([]byte, 7)
		for int64(len(body)) <= limit {
			n, err := m.body.Read(buf)
			if n < 0 || n > len(buf) {
				t.Fatalf("Read returned %d", n)
			}
			body = append(body, buf[:n]...)
			if err == io.EOF {
				if !m.body.done() {
					t.Fatal("io.EOF but not done")
				}
				break
			}
			if err != nil {
				if m.body.done() {
					t.Fatalf("done after %v", err)
				}
				return
			}
		}
		if int64(len(body)) > int64(len(data)) {
			t.Fatalf("%d-byte body from %d bytes of input", len(body), len(data))
		}
		if m.length >= 0 && m.body.done() && int64(len(body)) != m.length {
			t.Fatalf("Content-Length %d but %d bytes", m.length, len(body))
		}
		if cl, ok := m.header["content-length"]; ok && m.keep && m.body.done() && m.status != 204 && m.status != 304 {
			if _, chunked := m.header["transfer-encoding"]; !chunked {
				if n, err := parseContentLength(cl); err != nil || n != int64(len(body)) {
					t.Fatalf("Content-Length %q but %d bytes", cl, len(body))
				}
			}
		}
	})
}
