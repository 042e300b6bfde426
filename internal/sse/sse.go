// Package sse reads server-sent events (the text/event-stream of the HTML
// standard) with every line and event bounded: the remote model providers'
// streamed replies and MCP's HTTP transports both read them here.
package sse

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Server-sent events, as the HTML standard defines the stream: lines ended by
// CRLF, LF or CR; "field: value" lines (one space after the colon dropped);
// lines starting with ':' are comments; a blank line ends an event. Only the
// fields the model APIs and MCP use are kept: event and data (several data lines are
// joined with "\n"). Every line and every event is bounded, so a broken
// server cannot make the reader allocate without end.

const (
	// DefaultMaxLine bounds one line of the stream.
	DefaultMaxLine = 256 << 10
	// DefaultMaxEvent bounds the data of one event.
	DefaultMaxEvent = 1 << 20
)

// Event is one server-sent event.
type Event struct {
	Type string // the event field; "" when the server sent none ("message")
	Data []byte // valid until the next call to Next
}

// ErrTooLong is the error of a line or an event over its bound.
var ErrTooLong = errors.New("server-sent event too long")

// Reader reads events from a stream.
type Reader struct {
	br       *bufio.Reader
	MaxLine  int // 0: DefaultMaxLine
	MaxEvent int // 0: DefaultMaxEvent

	line   []byte
	data   []byte
	typ    string
	skipLF bool // the last line ended with CR: a LF right after it is part of that end
	err    error
}

// NewReader reads events from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 4096)}
}

// Next returns the next event. At the end of the stream it returns io.EOF
// (an event not ended by a blank line is dropped, as the standard says), or
// io.ErrUnexpectedEOF if the stream ended inside a line or an event; a read
// error is returned as it is.
func (s *Reader) Next() (Event, error) {
	if s.err != nil {
		return Event{}, s.err
	}
	maxEvent := s.MaxEvent
	if maxEvent <= 0 {
		maxEvent = DefaultMaxEvent
	}
	s.data, s.typ = s.data[:0], ""
	hasData, started := false, false
	for {
		line, err := s.readLine()
		if err != nil {
			if err == io.EOF && (started || len(line) > 0) {
				err = io.ErrUnexpectedEOF
			}
			s.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if !hasData {
				// A blank line with no data before it dispatches nothing.
				s.typ, started = "", false
				continue
			}
			return Event{Type: s.typ, Data: s.data}, nil
		}
		started = true
		if line[0] == ':' {
			continue
		}
		name, value := line, []byte(nil)
		for i, c := range line {
			if c == ':' {
				name, value = line[:i], line[i+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
				break
			}
		}
		switch string(name) {
		case "event":
			s.typ = string(value)
		case "data":
			if hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > maxEvent {
				s.err = fmt.Errorf("%w: an event's data is over %d bytes", ErrTooLong, maxEvent)
				return Event{}, s.err
			}
			s.data = append(s.data, value...)
			hasData = true
		}
	}
}

// readLine returns the next line without its end; io.EOF with the bytes read
// when the stream ends.
func (s *Reader) readLine() ([]byte, error) {
	maxLine := s.MaxLine
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	s.line = s.line[:0]
	for {
		c, err := s.br.ReadByte()
		if err != nil {
			return s.line, err
		}
		if s.skipLF {
			s.skipLF = false
			if c == '\n' {
				continue
			}
		}
		switch c {
		case '\n':
			return s.line, nil
		case '\r':
			s.skipLF = true
			return s.line, nil
		}
		if len(s.line) >= maxLine {
			return nil, fmt.Errorf("%w: a line is over %d bytes", ErrTooLong, maxLine)
		}
		s.line = append(s.line, c)
	}
}
