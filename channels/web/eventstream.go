package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// eventStream writes server-sent events on one reply: the pins stream and a
// streamed chat answer. Writes may come from several goroutines (a chat's
// text from the agent, its approvals from the authorizer's asker), so they
// are serialized, and once the handler has returned (close) a late writer
// is ignored instead of touching a finished ResponseWriter.
type eventStream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	closed bool
	err    error // the first failed write: the browser is gone
}

// startEvents answers with the event-stream headers.
func startEvents(w http.ResponseWriter) *eventStream {
	w.Header().Set("Content-Type", "text/event-stream")
	// A proxy (nginx) must not hold the events back until the reply ends.
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return &eventStream{w: w, rc: http.NewResponseController(w)}
}

// send writes one event whose data is v as JSON (one line: JSON escapes
// newlines, so no value can end the event early or forge another), and
// flushes it at once. The write has writeLimit to finish: a browser that
// stops reading does not hold the handler.
func (e *eventStream) send(event string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || e.err != nil {
		return e.err
	}
	e.rc.SetWriteDeadline(time.Now().Add(writeLimit))
	if _, err := fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", event, raw); err != nil {
		e.err = err
		return err
	}
	if err := e.rc.Flush(); err != nil {
		e.err = err
	}
	return e.err
}

// close ends the stream for late writers; the handler returns after it.
func (e *eventStream) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
}
