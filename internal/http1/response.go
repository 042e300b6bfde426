package http1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// The response parser. It reads what RFC 9112 allows a server to send: a status line,
// header fields, and a body framed by chunked transfer coding, Content-Length, or the
// end of the connection. Every line, the header block and the number of fields are
// bounded, so a broken or hostile server cannot make it allocate without end or loop
// forever; the body is streamed, and its size is the caller's to cap.

const (
	maxLineBytes   = 8 << 10  // one status, header, chunk-size or trailer line
	maxHeadBytes   = 64 << 10 // all header (or trailer) lines of a response
	maxHeadFields  = 100
	maxInterim     = 8 // 1xx responses skipped before the real one
	maxChunkDigits = 15
)

// Header holds a response's fields: keys in lower case, repeated fields joined with
// ", ".
type Header map[string]string

// Get returns a field's value; names are case-insensitive.
func (h Header) Get(name string) string { return h[strings.ToLower(name)] }

// hasToken reports whether a comma-separated field (Connection) lists tok.
func (h Header) hasToken(name, tok string) bool {
	for _, t := range strings.Split(h.Get(name), ",") {
		if strings.EqualFold(strings.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}

// head is a parsed status line and header.
type head struct {
	status int
	reason string
	minor  int // 0 for HTTP/1.0, 1 for HTTP/1.1
	header Header
}

// message is a response whose body is still on the wire.
type message struct {
	head
	length int64 // the body's length; -1 when unknown (chunked, until close)
	body   bodyReader
	// keep says the connection may carry another request once the body has been read
	// to its end: HTTP/1.1, no "Connection: close", and a body whose end is framed,
	// not the connection's.
	keep bool
}

// bodyReader reads one body's bytes off the connection; io.EOF is its framed end.
type bodyReader interface {
	io.Reader
	// done reports whether the body ended cleanly (io.EOF was returned).
	done() bool
}

// readResponse reads the head of one response from br, skipping interim (1xx) ones,
// and sets up the reader of its body. noBody is for a response to HEAD.
func readResponse(br *bufio.Reader, noBody bool) (*message, error) {
	for range maxInterim {
		h, err := readHead(br)
		if err != nil {
			return nil, err
		}
		if h.status == 101 {
			return nil, errors.New("server switched protocols (101) without being asked")
		}
		if h.status >= 200 {
			return frame(br, h, noBody)
		}
	}
	return nil, fmt.Errorf("more than %d interim (1xx) responses", maxInterim)
}

// readHead reads a status line and header fields (also used for a proxy's answer to
// CONNECT, which has no body).
func readHead(br *bufio.Reader) (*head, error) {
	line, err := readLine(br)
	if err != nil {
		if err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	h := &head{}
	if err := h.parseStatus(line); err != nil {
		return nil, err
	}
	if h.header, err = readFields(br); err != nil {
		return nil, err
	}
	return h, nil
}

// parseStatus parses "HTTP/1.1 200 OK" (the reason may be empty or missing).
func (h *head) parseStatus(line string) error {
	proto, rest, _ := strings.Cut(line, " ")
	switch proto {
	case "HTTP/1.1":
		h.minor = 1
	case "HTTP/1.0":
		h.minor = 0
	default:
		return fmt.Errorf("not an HTTP/1.x status line: %q", clip(line))
	}
	code, reason, _ := strings.Cut(rest, " ")
	if len(code) != 3 || code[0] < '1' || code[0] > '9' || !isDigits(code) {
		return fmt.Errorf("malformed status code in %q", clip(line))
	}
	h.status, _ = strconv.Atoi(code)
	h.reason = clip(reason)
	return nil
}

// readFields reads header (or trailer) fields up to the empty line that ends them.
func readFields(br *bufio.Reader) (Header, error) {
	h := Header{}
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

// frame decides how the body of h is delimited (RFC 9112 §6.3) and whether the
// connection may be kept.
func frame(br *bufio.Reader, h *head, noBody bool) (*message, error) {
	m := &message{head: *h, length: -1}
	keepable := h.minor == 1 && !h.header.hasToken("Connection", "close")
	if noBody || h.status == 204 || h.status == 304 {
		m.length, m.body, m.keep = 0, &lengthBody{}, keepable
		return m, nil
	}
	te, hasTE := h.header["transfer-encoding"]
	cl, hasCL := h.header["content-length"]
	switch {
	case hasTE:
		// Only chunked is ever applied to a reply to us: no TE or Accept-Encoding asks
		// for more.
		if !strings.EqualFold(trimOWS(te), "chunked") {
			return nil, fmt.Errorf("unsupported Transfer-Encoding %q", clip(te))
		}
		m.body = &chunkedBody{br: br}
		// With both, Content-Length is ignored and the connection not trusted after.
		m.keep = keepable && !hasCL
	case hasCL:
		n, err := parseContentLength(cl)
		if err != nil {
			return nil, err
		}
		m.length, m.body, m.keep = n, &lengthBody{br: br, left: n, total: n}, keepable
	default:
		m.body = &closeBody{br: br}
	}
	return m, nil
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

// lengthBody is a body of Content-Length bytes.
type lengthBody struct {
	br          *bufio.Reader
	left, total int64
}

func (b *lengthBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.br.Read(p)
	b.left -= int64(n)
	if err == io.EOF {
		err = fmt.Errorf("reply cut short: %d of %d bytes: %w", b.total-b.left, b.total, io.ErrUnexpectedEOF)
	}
	if err == nil && b.left == 0 {
		err = io.EOF
	}
	return n, err
}

func (b *lengthBody) done() bool { return b.left == 0 }

// closeBody is a body that ends with the connection.
type closeBody struct {
	br  *bufio.Reader
	eof bool
}

func (b *closeBody) Read(p []byte) (int, error) {
	n, err := b.br.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *closeBody) done() bool { return b.eof }

// chunkedBody decodes chunked transfer coding: size lines (hex, optional extensions,
// which are ignored), data each followed by CRLF, a zero-size chunk, then trailer
// fields, which are read and dropped.
type chunkedBody struct {
	br      *bufio.Reader
	left    int64 // of the current chunk
	started bool  // a chunk was read: its data ends in CRLF
	err     error // sticky: io.EOF at the end
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left == 0 {
		if b.err = b.next(); b.err != nil {
			return 0, b.err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.br.Read(p)
	b.left -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.err = fmt.Errorf("chunked reply cut short: %w", err)
		return n, b.err
	}
	return n, nil
}

// next reads up to the data of the next chunk, or through the trailer of the last.
func (b *chunkedBody) next() error {
	if b.started {
		end, err := readLine(b.br)
		if err != nil || end != "" {
			if err == nil || err == io.EOF {
				err = errors.New("chunk data not followed by CRLF")
			}
			return err
		}
	}
	b.started = true
	line, err := readLine(b.br)
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
		if _, err := readFields(b.br); err != nil {
			return fmt.Errorf("chunked trailer: %w", err)
		}
		return io.EOF
	}
	b.left = size
	return nil
}

func (b *chunkedBody) done() bool { return b.err == io.EOF }

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
