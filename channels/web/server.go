// Package web is the dashboard on the LAN (docs/web.md): pages and a JSON
// API served by the daemon, for browsers paired like a phone. Every action
// is a call by principal web:<device>, a person, on the one call path
// (tools.Runner.Call, decided by policy.Authorizer); what the pages show is
// read from the board's facts, which the daemon hands in.
package web

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
	"golang.org/x/net/netutil"
)

// Channel is the door's name in the audit and in policy.channels.
const Channel = "web"

// Bounds: a stranger who can reach the port must not exhaust the daemon.
const (
	maxConns   = 32       // open connections; the rest wait in the kernel's backlog
	maxStreams = 8        // /api/events streams at once
	maxBody    = 16 << 10 // a request body
	maxHeader  = 8 << 10
	streamLife = 10 * time.Minute // an event stream ends; EventSource reconnects
	writeLimit = 15 * time.Second // a reply's write, but for the two below
	callLimit  = 5 * time.Minute  // /api/call: an approval may be waited for
)

// Pin is one configured pin as the pages show it.
type Pin struct {
	Name   string `json:"name"`
	GPIO   int    `json:"gpio"`
	Mode   string `json:"mode"`
	Level  int    `json:"level"` // 0 or 1; -1: unreadable
	Output bool   `json:"output"`
}

// Fact is one line of the overview.
type Fact struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Automation is one automation as auto list shows it.
type Automation struct {
	Name    string `json:"name"`
	Trigger string `json:"trigger"`
	Next    string `json:"next,omitempty"`
	Last    string `json:"last,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Paused  bool   `json:"paused,omitempty"`
}

// Facts is what the pages read, from the daemon: nothing here is a call.
type Facts interface {
	Pins() []Pin
	Overview() []Fact
	Automations() []Automation
	// Audit is up to n entries with an id below before (0: the latest), oldest first.
	Audit(before uint64, n int) ([]store.AuditEntry, error)
	// Models are the models the agent may answer with (models.go).
	Models() []Model
	// Doctor is doctor's findings (doctor.go), nil while none are known
	// yet: it must not wait for the checks, which read the disk and may
	// start the model runner.
	Doctor() []Finding
}

// Server is the dashboard of one daemon.
type Server struct {
	Runner   *tools.Runner
	Auth     *policy.Authorizer
	Sessions *Sessions
	Facts    Facts
	// Chat, when set, answers the chat page's messages (the daemon's
	// Dispatcher: commands, free text for the agent).
	Chat channels.Handler
	// Names are the host names browsers may use besides IP literals (web.names).
	Names []string
	// TLS: served over https (the cookie is Secure, the Origin https).
	TLS bool
	Log *slog.Logger

	streams atomic.Int32 // /api/events streams open
	chats   atomic.Int32 // chat turns running
}

// Caller is a paired browser's principal: a person clicks.
func Caller(name string) tools.Caller {
	return tools.Caller{Channel: Channel, User: "web:" + name, Actor: tools.Person}
}

// Serve serves the dashboard on ln until ctx ends; cert, when set, makes it https.
func (s *Server) Serve(ctx context.Context, ln net.Listener, cert *tls.Certificate) error {
	ln = netutil.LimitListener(ln, maxConns)
	srv := &http.Server{Handler: s.Handler(),
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: maxHeader,
		ErrorLog: slog.NewLogLogger(s.log().Handler(), slog.LevelDebug)}
	if cert != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		srv.Close() // event streams do not end by themselves
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Handler is the dashboard's routes, every one behind the guards (guard.go).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	page := func(name string) http.HandlerFunc { return s.guard(s.page(name), true) }
	mux.HandleFunc("GET /{$}", page("overview"))
	mux.HandleFunc("GET /pins", page("pins"))
	mux.HandleFunc("GET /approvals", page("approvals"))
	mux.HandleFunc("GET /automations", page("automations"))
	mux.HandleFunc("GET /audit", page("audit"))
	mux.HandleFunc("GET /models", page("models"))
	mux.HandleFunc("POST /approvals/{id}", s.guard(s.approvalsForm, true))
	mux.HandleFunc("GET /chat", s.guard(s.chatPage, true))
	mux.HandleFunc("POST /chat", s.guard(s.chatForm, true))
	mux.HandleFunc("GET /pair", s.guard(s.pairPage, false))
	mux.HandleFunc("POST /pair", s.guard(s.pairForm, false))
	mux.Handle("GET /static/", s.guard(assets, false))

	mux.HandleFunc("POST /api/session", s.guard(s.apiSession, false))
	mux.HandleFunc("GET /api/pins", s.guard(s.apiPins, true))
	mux.HandleFunc("POST /api/call", s.guard(s.apiCall, true))
	mux.HandleFunc("GET /api/audit", s.guard(s.apiAudit, true))
	mux.HandleFunc("GET /api/events", s.guard(s.apiEvents, true))
	mux.HandleFunc("GET /api/approvals", s.guard(s.apiApprovals, true))
	mux.HandleFunc("POST /api/approvals/{id}", s.guard(s.apiDecide, true))
	mux.HandleFunc("GET /api/automations", s.guard(s.apiAutomations, true))
	mux.HandleFunc("GET /api/models", s.guard(s.apiModels, true))
	mux.HandleFunc("GET /api/doctor", s.guard(s.apiDoctor, true))
	mux.HandleFunc("POST /api/chat", s.guard(s.apiChat, true))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		// same-origin, not no-referrer: under no-referrer a browser sends
		// "Origin: null" with a form post, which the Origin guard must refuse.
		h.Set("Referrer-Policy", "same-origin")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeLimit))
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		mux.ServeHTTP(w, r)
	})
}
