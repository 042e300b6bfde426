package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// MaxSessions bounds the HTTP sessions kept: a client that never says
// goodbye (DELETE) leaves one behind; the least recently used goes first.
const MaxSessions = 64

// HTTPHandler serves the streamable HTTP transport: a POSTed request is
// answered in JSON; initialize opens a session named by the Mcp-Session-Id
// header of the answer; a GET event stream carries the server's
// notifications; DELETE ends the session.
type HTTPHandler struct {
	get func(*http.Request) *Server

	mu       sync.Mutex
	sessions map[string]*httpSession
}

type httpSession struct {
	x        *session
	used     time.Time
	events   chan string // notifications for the GET stream
	gone     chan struct{}
	once     sync.Once
	inflight inflight
	mu       sync.Mutex
	stream   bool // a GET stream is open
}

// NewHTTPHandler serves the server get returns at each initialize (nil: 503).
func NewHTTPHandler(get func(*http.Request) *Server) *HTTPHandler {
	return &HTTPHandler{get: get, sessions: map[string]*httpSession{}}
}

func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.stream(w, r)
	case http.MethodDelete:
		h.mu.Lock()
		hs := h.sessions[r.Header.Get("Mcp-Session-Id")]
		delete(h.sessions, r.Header.Get("Mcp-Session-Id"))
		h.mu.Unlock()
		if hs == nil {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
		hs.end()
		w.WriteHeader(http.StatusNoContent)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// end forgets the session and closes its event stream.
func (hs *httpSession) end() {
	hs.once.Do(func() {
		hs.x.end()
		close(hs.gone)
	})
}

func (h *HTTPHandler) session(r *http.Request) *httpSession {
	h.mu.Lock()
	defer h.mu.Unlock()
	hs := h.sessions[r.Header.Get("Mcp-Session-Id")]
	if hs != nil {
		hs.used = time.Now()
	}
	return hs
}

func (h *HTTPHandler) post(w http.ResponseWriter, r *http.Request) {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxMessage+1))
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(b) > MaxMessage {
		http.Error(w, fmt.Sprintf("a message longer than %d bytes", MaxMessage), http.StatusRequestEntityTooLarge)
		return
	}
	m, err := Decode(b)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, &Message{JSONRPC: "2.0", ID: json.RawMessage("null"),
			Error: &Error{Code: CodeParseError, Message: err.Error()}})
		return
	}
	var hs *httpSession
	if m.Method == methodInitialize {
		s := h.get(r)
		if s == nil {
			http.Error(w, "no MCP server is available", http.StatusServiceUnavailable)
			return
		}
		hs = h.open(w, s)
	} else if hs = h.session(r); hs == nil {
		if r.Header.Get("Mcp-Session-Id") == "" {
			http.Error(w, "missing Mcp-Session-Id: initialize first", http.StatusBadRequest)
		} else {
			http.Error(w, "unknown or expired session", http.StatusNotFound)
		}
		return
	}
	if !m.IsRequest() {
		if m.Method == methodCancelled {
			hs.inflight.cancelled(m.Params)
		}
		if m.IsNotification() {
			hs.x.handle(r.Context(), m)
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer hs.inflight.start(m.ID, cancel)()
	res, herr := hs.x.handle(ctx, m)
	if ctx.Err() != nil {
		w.WriteHeader(http.StatusAccepted) // cancelled: no answer is expected
		return
	}
	writeJSON(w, http.StatusOK, reply(m.ID, res, herr))
}

// reply makes the response to request id from a handler's result and error.
func reply(id json.RawMessage, res any, err error) *Message {
	m := &Message{JSONRPC: "2.0", ID: id}
	if err != nil {
		e, ok := err.(*Error)
		if !ok {
			e = &Error{Code: CodeInternalError, Message: err.Error()}
		}
		m.Error = e
		return m
	}
	b, merr := json.Marshal(res)
	if merr != nil {
		m.Error = &Error{Code: CodeInternalError, Message: merr.Error()}
		return m
	}
	m.Result = b
	return m
}

// open makes a session of s and names it in the answer's header.
func (h *HTTPHandler) open(w http.ResponseWriter, s *Server) *httpSession {
	var raw [16]byte
	rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	hs := &httpSession{used: time.Now(), events: make(chan string, 8), gone: make(chan struct{})}
	hs.x = s.newSession(func(method string) {
		select {
		case hs.events <- method:
		default: // nobody listens, or it is behind: list_changed again says nothing new
		}
	})
	h.mu.Lock()
	if len(h.sessions) >= MaxSessions {
		var oldest string
		for k, v := range h.sessions {
			if oldest == "" || v.used.Before(h.sessions[oldest].used) {
				oldest = k
			}
		}
		old := h.sessions[oldest]
		delete(h.sessions, oldest)
		old.end()
	}
	h.sessions[id] = hs
	h.mu.Unlock()
	w.Header().Set("Mcp-Session-Id", id)
	return hs
}

// stream is the GET event stream of a session's notifications.
func (h *HTTPHandler) stream(w http.ResponseWriter, r *http.Request) {
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		http.Error(w, "GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	hs := h.session(r)
	if hs == nil {
		http.Error(w, "unknown or expired session", http.StatusNotFound)
		return
	}
	hs.mu.Lock()
	busy := hs.stream
	hs.stream = true
	hs.mu.Unlock()
	if busy {
		http.Error(w, "this session has an event stream already", http.StatusConflict)
		return
	}
	defer func() { hs.mu.Lock(); hs.stream = false; hs.mu.Unlock() }()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-hs.gone:
			return
		case method := <-hs.events:
			b, _ := json.Marshal(&Message{JSONRPC: "2.0", Method: method})
			if writeEvent(w, b) != nil {
				return
			}
			flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, m *Message) {
	b, _ := json.Marshal(m)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
