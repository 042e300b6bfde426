package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// readLine reads one line of at most max bytes (without its newline). A
// longer line is an error: the rest of it is not read.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return nil, fmt.Errorf("a message longer than %d bytes", max)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF && len(line) > 0:
			return line, nil
		default:
			return nil, err
		}
	}
}

// Stream is the stdio transport: one JSON-RPC message per line, in both
// directions (the MCP stdio transport; blank lines are skipped). Name says
// whose stream it is in errors ("stdout of node").
type Stream struct {
	Name string
	br   *bufio.Reader
	w    io.Writer
	c    io.Closer
	mu   sync.Mutex
	line int
}

// NewStream reads messages from r and writes them to w; closing it closes c
// (when not nil).
func NewStream(name string, r io.Reader, w io.Writer, c io.Closer) *Stream {
	return &Stream{Name: name, br: bufio.NewReaderSize(r, 64<<10), w: w, c: c}
}

func (s *Stream) Read() (*Message, error) {
	for {
		b, err := readLine(s.br, MaxMessage)
		s.line++
		if err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%s ended: %w", s.Name, io.EOF)
			}
			return nil, fmt.Errorf("%s line %d: %w", s.Name, s.line, err)
		}
		if len(trimSpace(b)) == 0 {
			continue
		}
		m, err := Decode(b)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", s.Name, s.line, err)
		}
		return m, nil
	}
}

func (s *Stream) Write(_ context.Context, m *Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.w.Write(append(b, '\n'))
	return err
}

func (s *Stream) Close() error {
	if s.c != nil {
		return s.c.Close()
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Pipe returns two connected stdio transports in memory (for tests and for
// running a server and a client in one process).
func Pipe() (Transport, Transport) {
	ar, bw := io.Pipe()
	br, aw := io.Pipe()
	a := NewStream("pipe", ar, aw, multiCloser{ar, aw})
	b := NewStream("pipe", br, bw, multiCloser{br, bw})
	return a, b
}

type multiCloser []io.Closer

func (m multiCloser) Close() error {
	for _, c := range m {
		c.Close()
	}
	return nil
}
