package telegram

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The HTTP/1.1 response parser of the Bot API client (see http1.go for why there is
// one). It reads what RFC 9112 allows a server to send in answer to a POST, and
// nothing more: a status line, header fields, and a body framed by chunked transfer
// coding, Content-Length, or the end of the connection. Every length is bounded, so a
// broken or hostile server cannot make it allocate without end or loop forever.

const (
	maxLineBytes   = 8 << 10  // one status, header, chunk-size or trailer line
	maxHeadBytes   = 64 << 10 // all header (or trailer) lines of a response
	maxHeadFields  = 100
	maxInterim     = 8 // 1xx responses skipped before the real one
	maxChunkDigits = 15
)

// errTooLarge is a body over the cap; the connection is not reusable after it.
var errTooLarge = errors.New("reply too large")

// h1Response is a parsed response.
type h1Response struct {
	status int
	reason string
	minor  int               // 0 for HTTP/1.0, 1 for HTTP/1.1
	header map[string]string // keys in lower case; repeated fields joined with ", "
	body   []byte
	// keep says the connection may carry another request: HTTP/1.1, no
	// "Connection: close", and a body whose end was framed, not the connection's.
	keep bool
}

// get returns a header field's value; names are case-insensitive.
func (r *h1Response) get(name string) string { return r.header[strings.ToLower(name)] }

// hasToken reports whether a comma-separated field (Connection) lists tok.
func (r *h1Response) hasToken(name, tok string) bool {
	for _, t := range strings.Split(r.get(name), ",") {
		if strings.EqualFold(strings.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}

// readResponse reads one response to a POST from br, skipping interim (1xx) ones,
// with a body of at most limit bytes.
func readResponse(br *bufio.Reader, limit int64) (*h1Response, error) {
	for range maxInterim {
		r, err := readHead(br)
		if err != nil {
			return nil, err
		}
		if r.status >= 200 || r.status == 101 {
			if r.status == 101 {
				return nil, errors.New("server switched protocols (101) without being asked")
			}
			if err := readBody(br, r, limit); err != nil {
				return nil, err
			}
			return r, nil
		}
	}
	return nil, fmt.Errorf("more than %d interim (1xx) responses", maxInterim)
}

// readHead reads a status line and header fields (also used for a proxy's answer to
// CONNECT, which has no body).
func readHead(br *bufio.Reader) (*h1Response, error) {
	line, err := readLine(br)
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	r := &h1Response{}
	if err := r.parseStatus(line); err != nil {
		return nil, err
	}
	if r.header, err = readFields(br); err != nil {
		return nil, err
	}
	return r, nil
}

// parseStatus parses "HTTP/1.1 200 OK" (the reason may be empty or missing).
func (r *h1Response) parseStatus(line string) error {
	proto, rest, _ := strings.Cut(line, " ")
	switch proto {
	case "HTTP/1.1":
		r.minor = 1
	case "HTTP/1.0":
		r.minor = 0
	default:
		return fmt.Errorf("not an HTTP/1.x status line: %q", clip(line))
	}
	code, reason, _ := strings.Cut(rest, " ")
	if len(code) != 3 || code[0] < '1' || code[0] > '9' || !isDigits(code) {
		return fmt.Errorf("malformed status code in %q", clip(line))
	}
	r.status, _ = strconv.Atoi(code)
	r.reason = reason
	return nil
}

// readFields reads header (or trailer) fields up to the empty line that ends them.
func readFields(br *bufio.Reader) (map[string]string, error) {
	h := map[string]string{}
	total, n := 0, 0
	last := ""
	for {
		line, err := readLine(br)
		if err != nil {
			if err == io.EOF {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == "" {
			return h, nil
		}
		if total += len(line); total > maxHeadBytes {
			return nil, fmt.Errorf("header fields longer than %d bytes", maxHeadBytes)
		}
		if line[0] == ' ' || line[0] == '\t' {
			// obs-fold: RFC 9112 §5.2 has a client replace it with a space.
			if last == "" {
				return nil, errors.New("header continuation line without a field")
			}
			h[last] += " " + trimOWS(line)
			continue
		}
		if n++; n > maxHeadFields {
			return nil, fmt.Errorf("more than %d header fields", maxHeadFields)
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(name) {
			return nil, fmt.Errorf("malformed header field %q", clip(line))
		}
		name, value = strings.ToLower(name), trimOWS(value)
		if old, ok := h[name]; ok {
			value = old + ", " + value
		}
		h[name] = value
		last = name
	}
}

// readBody reads r's body as its framing says (RFC 9112 §6.3) and decides keep.
func readBody(br *bufio.Reader, r *h1Response, limit int64) error {
	if r.status == 204 || r.status == 304 {
		r.keep = r.minor == 1 && !r.hasToken("Connection", "close")
		return nil
	}
	var buf bytes.Buffer
	framed := true
	te, hasTE := r.header["transfer-encoding"]
	cl, hasCL := r.header["content-length"]
	switch {
	case hasTE:
		// Only chunked is ever applied to a reply to us: no TE or Accept-Encoding is sent.
		if !strings.EqualFold(trimOWS(te), "chunked") {
			return fmt.Errorf("unsupported Transfer-Encoding %q", clip(te))
		}
		if err := readChunked(br, &buf, limit); err != nil {
			return err
		}
		// With both, Content-Length is ignored and the connection not trusted after.
		framed = !hasCL
	case hasCL:
		n, err := parseContentLength(cl)
		if err != nil {
			return err
		}
		if n > limit {
			return fmt.Errorf("%w: Content-Length %d is over the %d-byte cap", errTooLarge, n, limit)
		}
		got, err := io.CopyN(&buf, br, n)
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("reply cut short: %d of %d bytes: %w", got, n, io.ErrUnexpectedEOF)
			}
			return err
		}
	default:
		framed = false
		n, err := io.Copy(&buf, io.LimitReader(br, limit+1))
		if err != nil {
			return err
		}
		if n > limit {
			return fmt.Errorf("%w: over the %d-byte cap", errTooLarge, limit)
		}
	}
	r.body = buf.Bytes()
	r.keep = framed && r.minor == 1 && !r.hasToken("Connection", "close")
	return nil
}

// parseContentLength accepts digits, or a list of equal ones (RFC 9110 §8.6).
func parseContentLength(v string) (int64, error) {
	var n int64 = -1
	for _, p := range strings.Split(v, ",") {
		p = trimOWS(p)
		m, err := strconv.ParseInt(p, 10, 64)
		if err != nil || !isDigits(p) || (n >= 0 && m != n) {
			return 0, fmt.Errorf("malformed Content-Length %q", clip(v))
		}
		n = m
	}
	return n, nil
}

// readChunked decodes a chunked body into buf: size lines (hex, optional extensions,
// which are ignored), data each followed by CRLF, a zero-size chunk, then trailer
// fields, which are read and dropped.
func readChunked(br *bufio.Reader, buf *bytes.Buffer, limit int64) error {
	for {
		line, err := readLine(br)
		if err != nil {
			if err == io.EOF {
				return fmt.Errorf("chunked reply cut short: %w", io.ErrUnexpectedEOF)
			}
			return err
		}
		hex, _, _ := strings.Cut(line, ";")
		hex = trimOWS(hex)
		if hex == "" || len(hex) > maxChunkDigits {
			return fmt.Errorf("malformed chunk size %q", clip(line))
		}
		size, err := strconv.ParseInt(hex, 16, 64)
		if err != nil || !isHex(hex) {
			return fmt.Errorf("malformed chunk size %q", clip(line))
		}
		if size == 0 {
			if _, err := readFields(br); err != nil {
				return fmt.Errorf("chunked trailer: %w", err)
			}
			return nil
		}
		if int64(buf.Len())+size > limit {
			return fmt.Errorf("%w: chunks over the %d-byte cap", errTooLarge, limit)
		}
		if _, err := io.CopyN(buf, br, size); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return fmt.Errorf("chunked reply cut short: %w", err)
		}
		end, err := readLine(br)
		if err != nil || end != "" {
			if err == nil || err == io.EOF {
				err = errors.New("chunk data not followed by CRLF")
			}
			return err
		}
	}
}

// readLine reads a line of at most maxLineBytes ending in LF (CRLF or a bare LF, which
// RFC 9112 §2.2 lets a recipient accept) and returns it without the ending. A line cut
// by the end of input is io.ErrUnexpectedEOF; no input at all is io.EOF.
func readLine(br *bufio.Reader) (string, error) {
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			if len(long)+len(frag) > maxLineBytes {
				return "", fmt.Errorf("line longer than %d bytes", maxLineBytes)
			}
			long = append(long, frag...)
			continue
		}
		if err != nil {
			if err == io.EOF && len(long)+len(frag) > 0 {
				return "", io.ErrUnexpectedEOF
			}
			return "", err
		}
		line := frag
		if long != nil {
			line = append(long, frag...)
		}
		if len(line) > maxLineBytes {
			return "", fmt.Errorf("line longer than %d bytes", maxLineBytes)
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		return string(line), nil
	}
}

func trimOWS(s string) string { return strings.Trim(s, " \t") }

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if (s[i] < '0' || s[i] > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return s != ""
}

// isToken reports whether s is an RFC 9110 token (a field name).
func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return s != ""
}

// clip shortens what a server sent before it goes into an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
