package mcp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Event is one server-sent event (the fields MCP uses).
type Event struct {
	Name string // "message" when the stream gave none
	ID   string
	Data []byte
}

// EventReader reads server-sent events (the text/event-stream format of
// the HTML standard) with each event's data bounded by MaxMessage.
type EventReader struct {
	br *bufio.Reader
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{br: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the next event with data, or io.EOF at the end of the stream.
func (er *EventReader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	hasData := false
	for {
		line, err := readLine(er.br, MaxMessage)
		if err != nil {
			if err == io.EOF && hasData {
				break // a last event without its blank line
			}
			if err == io.EOF {
				return Event{}, io.EOF
			}
			return Event{}, fmt.Errorf("event stream: %w", err)
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			if hasData {
				break
			}
			ev = Event{} // an event without data is dispatched to nobody
			continue
		}
		if line[0] == ':' {
			continue // a comment (keep-alive)
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "id":
			ev.ID = string(value)
		case "data":
			if data.Len()+len(value)+1 > MaxMessage {
				return Event{}, fmt.Errorf("event stream: an event longer than %d bytes", MaxMessage)
			}
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
	if ev.Name == "" {
		ev.Name = "message"
	}
	ev.Data = data.Bytes()
	return ev, nil
}

// writeEvent writes m as one "message" event.
func writeEvent(w io.Writer, data []byte) error {
	var b strings.Builder
	b.WriteString("event: message\n")
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
