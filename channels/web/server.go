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
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/internal/fairlisten"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Channel is the door's name in the audit and in policy.channels.
const Channel = "web"

// Bounds: a stranger who can reach the port must not exhaust the daemon,
// nor keep a paired browser out (internal/fairlisten): connections that hold
// a slot without a whole request, or idle, are closed to make room for a new
// one; a connection without a session idle for anonIdle is closed; requests
// without a session are half the connections at most, so the other half is
// left to paired browsers; event streams and chat turns are bounded per
// session, so that one browser cannot take another's.
const (
	maxConns   = 64 // open connections
	maxPerPeer = 24 // of one address (an IPv6 /64): a browser opens 6, and a stream per tab
	anonIdle   = 2 * time.Second
	headerTime = 5 * time.Second // to send a request's headers (the first one's too)
	maxStreams = 4               // /api/events streams of one session at once
	maxBody    = 16 << 10        // a request body
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
	// Sensors is what the sensors page reads (page_sensors.go); nil: the
	// page says there is none.
	Sensors SensorFacts
	Goals   GoalFacts   // the goals page (page_goals.go); nil: goals are off
	Memory  MemoryFacts // the memory page (page_memory.go); nil: memory is off
	Skills  SkillFacts  // the skills page (page_skills.go); nil: skills are off
	Setup   SetupFacts  // the setup page (page_setup.go); nil: setup is off
	// Chat, when set, answers the chat page's messages (the daemon's
	// Dispatcher: commands, free text for the agent).
	Chat channels.Handler
	// Names are the host names browsers may use besides IP literals (web.names).
	Names []string
	// TLS: served over https (the cookie is Secure, the Origin https).
	TLS bool
	Log *slog.Logger

	streams perSession   // /api/events streams open, by session
	chats   atomic.Int32 // chat turns running
	chatsOf perSession   // the same by session
}

// perSession counts what each session holds at once.
type perSession struct {
	mu sync.Mutex
	n  map[string]int
}

// take counts one more for key; false: it holds max already.
func (p *perSession) take(key string, max int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[key] >= max {
		return false
	}
	if p.n == nil {
		p.n = map[string]int{}
	}
	p.n[key]++
	return true
}

func (p *perSession) give(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n[key]--; p.n[key] <= 0 {
		delete(p.n, key)
	}
}

// Caller is a paired browser's principal: a person clicks.
func Caller(name string, role Role) tools.Caller {
	return tools.Caller{Channel: Channel, User: "web:" + name, Actor: tools.Person, Role: role}
}

// Serve serves the dashboard on ln until ctx ends; cert, when set, makes it https.
func (s *Server) Serve(ctx context.Context, ln net.Listener, cert *tls.Certificate) error {
	fl := fairlisten.New(ln, fairlisten.Limits{MaxConns: maxConns, PerPeer: maxPerPeer, AnonIdle: anonIdle})
	ln = fl
	srv := &http.Server{Handler: fl.Guard(s.Handler(), s.paired),
		ReadHeaderTimeout: headerTime, ReadTimeout: 10 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: maxHeader,
		ErrorLog: slog.NewLogLogger(s.log().Handler(), slog.LevelDebug)}
	fl.Hook(srv)
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

// paired reports whether r carries a paired browser's session cookie: its
// connection is then kept before strangers' (internal/fairlisten).
func (s *Server) paired(r *http.Request) bool {
	c, err := r.Cookie(cookieName)
	if err != nil {
		return false
	}
	_, ok := s.Sessions.lookup(c.Value)
	return ok
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// What a route may do. The door walk (TestEveryRouteIsAReadOrACall) holds
// every route to its kind.
type routeKind int

const (
	// read: a page, a list, the event stream; no call, no audit entry.
	read routeKind = iota
	// call: a tool call or a chat line, on the call path as web:<name>
	// with its role: the authorizer decides, the audit records.
	call
	// decide: an approval's answer, which the authorizer's Decide weighs.
	decide
	// pair: a one-time code exchanged for a session; the code was issued
	// by web/pair, on the call path.
	pair
)

// route is one of the dashboard's routes.
type route struct {
	pattern string
	kind    routeKind
	h       http.Handler
}

// routes are the dashboard's routes, every one behind the guards (guard.go).
func (s *Server) routes() []route {
	page := func(name string) http.Handler { return s.guard(s.page(name), true) }
	return slices.Concat([]route{
		{"GET /{$}", read, page("overview")},
		{"GET /pins", read, page("pins")},
		{"GET /approvals", read, page("approvals")},
		{"GET /automations", read, page("automations")},
		{"GET /audit", read, page("audit")},
		{"GET /models", read, page("models")},
		{"POST /approvals/{id}", decide, s.guard(s.approvalsForm, true)},
		{"GET /chat", read, s.guard(s.chatPage, true)},
		{"POST /chat", call, s.guard(s.chatForm, true)},
		{"GET /pair", read, s.guard(s.pairPage, false)},
		{"POST /pair", pair, s.guard(s.pairForm, false)},
		{"GET /static/", read, s.guard(assets, false)},

		{"POST /api/session", pair, s.guard(s.apiSession, false)},
		{"GET /api/pins", read, s.guard(s.apiPins, true)},
		{"POST /api/call", call, s.guard(s.apiCall, true)},
		{"GET /api/audit", read, s.guard(s.apiAudit, true)},
		{"GET /api/events", read, s.guard(s.apiEvents, true)},
		{"GET /api/approvals", read, s.guard(s.apiApprovals, true)},
		{"POST /api/approvals/{id}", decide, s.guard(s.apiDecide, true)},
		{"GET /api/automations", read, s.guard(s.apiAutomations, true)},
		{"GET /api/models", read, s.guard(s.apiModels, true)},
		{"GET /api/doctor", read, s.guard(s.apiDoctor, true)},
		{"POST /api/chat", call, s.guard(s.apiChat, true)},
	},
		s.sensorsRoutes(), // page_sensors.go
		s.goalsRoutes(),   // page_goals.go
		s.memoryRoutes(),  // page_memory.go
		s.skillsRoutes(),  // page_skills.go
		s.setupRoutes(),   // page_setup.go
	)
}

// Handler is the dashboard's routes with the headers every answer carries.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, r := range s.routes() {
		mux.Handle(r.pattern, r.h)
	}
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
		limit := int64(maxBody)
		if r.URL.Path == skillsUploadPath { // a skill's archive (page_skills.go), past the guards only
			limit = maxUpload
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		mux.ServeHTTP(w, r)
	})
}
