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

// sessionStream is one of a paired browser's long event streams (the pins
// and sensors, the goals): bounded per session, so that one browser's tabs
// cannot take another's, and ended by its life (the browser's EventSource
// connects again) or by the session's revocation.
type sessionStream struct {
	*eventStream
	end     *time.Timer // the stream's life
	token   string      // the session's cookie, to see it revoked
	release func()
}

// openStream starts a session's event stream, or answers 503 and returns
// nil when the session holds maxStreams already.
func (s *Server) openStream(w http.ResponseWriter, r *http.Request) *sessionStream {
	key := sessionOf(r).key
	if !s.streams.take(key, maxStreams) {
		apiError(w, http.StatusServiceUnavailable, "too many event streams open for this browser; close a tab")
		return nil
	}
	st := &sessionStream{end: time.NewTimer(streamLife), release: func() { s.streams.give(key) }}
	if c, err := r.Cookie(cookieName); err == nil {
		st.token = c.Value
	}
	st.eventStream = startEvents(w)
	return st
}

// revoked reports whether the stream's session is gone.
func (st *sessionStream) revoked(s *Server) bool {
	_, ok := s.Sessions.lookup(st.token)
	return !ok
}

func (st *sessionStream) close() {
	st.eventStream.close()
	st.end.Stop()
	st.release()
}
