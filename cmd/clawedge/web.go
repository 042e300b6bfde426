package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/store"
)

// The dashboard (web: {listen: ...}; docs/web.md): served by the daemon,
// paired through its control socket (`clawedge web pair|list|revoke`,
// webcmd.go). Off while the section is absent.

// serveWeb serves the dashboard when configured (its chat answered by
// chat, the daemon's Dispatcher) and returns its control op
// ("web": pair, list, revoke). A listen address in use or a bad certificate
// is logged, not fatal: the board's work goes on.
func (a *app) serveWeb(ctx context.Context, wg *sync.WaitGroup, chat channels.Handler) (map[string]func(json.RawMessage) (any, error), bool) {
	wc, sessions := a.cfg.Web, a.webSessions
	if wc == nil || sessions == nil {
		return nil, false
	}
	var cert *tls.Certificate
	if wc.TLSCert != "" {
		c, err := tls.LoadX509KeyPair(wc.TLSCert, wc.TLSKey)
		if err != nil {
			a.log.Warn("web: no dashboard: the certificate does not load", "err", err)
			return nil, false
		}
		cert = &c
	}
	ln, err := net.Listen("tcp", wc.Listen)
	if err != nil {
		a.log.Warn("web: cannot listen; no dashboard", "listen", wc.Listen, "err", err)
		return nil, false
	}
	s := &web.Server{Runner: a.runner, Auth: a.auth, Sessions: sessions, Facts: webFacts{a: a, doctor: &webDoctor{a: a}}, Chat: chat, Names: wc.Names, TLS: cert != nil, Log: a.log}
	scheme := "http"
	if cert != nil {
		scheme = "https"
	}
	a.log.Info("web: serving the dashboard", "url", scheme+"://"+ln.Addr().String()+"/")
	wg.Go(func() {
		if err := s.Serve(ctx, ln, cert); err != nil {
			a.log.Warn("web: server stopped", "err", err)
		}
	})
	return map[string]func(json.RawMessage) (any, error){"web": func(raw json.RawMessage) (any, error) { return webOp(sessions, raw) }}, true
}

// openWebSessions opens the dashboard's paired browsers before any door
// runs: Telegram's /web pairs through them too. nil: no dashboard.
func (a *app) openWebSessions() {
	if a.cfg.Web == nil {
		return
	}
	s, err := web.OpenSessions(a.store, nil)
	if err != nil {
		a.log.Warn("web: no dashboard", "err", err)
		return
	}
	s.SetExpiry(time.Duration(a.cfg.Web.SessionIdle), time.Duration(a.cfg.Web.SessionMax))
	a.webSessions = s
}

// webPairLine is Telegram's /web for an owner: the code, as `clawedge web pair` prints it.
func (a *app) webPairLine(name, role string) (string, error) {
	r, err := web.ParseRole(role)
	if err != nil {
		return "", err
	}
	code, exp, err := a.webSessions.Pair(name, r)
	if err != nil {
		return "", err
	}
	return pairLine(webReply{Code: code, Expires: exp, Paused: a.webSessions.PausedUntil()}, name, role), nil
}

// pairLine is what a person issuing a code is told.
func pairLine(r webReply, name, role string) string {
	line := fmt.Sprintf("code %s: type it on the dashboard's pairing page within %s; the browser will act as web:%s (%s)",
		r.Code, time.Until(r.Expires).Round(time.Minute), name, role)
	if !r.Paused.IsZero() {
		line += fmt.Sprintf("\nnote: wrong codes were tried from the network; no code is taken before %s", r.Paused.Local().Format("15:04:05"))
	}
	return line
}

// webPair is Telegram's WebPair: nil without a dashboard.
func (a *app) webPair() func(name, role string) (string, error) {
	if a.webSessions == nil {
		return nil
	}
	return a.webPairLine
}

// webRequest is the control op "web": pair (Name, Role), list, revoke (Name).
type webRequest struct {
	Op   string `json:"op"`
	Name string `json:"name,omitempty"`
	Role string `json:"role,omitempty"`
}

type webReply struct {
	Code    string       `json:"code,omitempty"`
	Expires time.Time    `json:"expires,omitzero"`
	Devices []web.Device `json:"devices,omitempty"`
	Revoked int          `json:"revoked,omitempty"`
	// Paused: wrong codes were tried; no code is taken before then.
	Paused time.Time `json:"paused,omitzero"`
}

func webOp(s *web.Sessions, raw json.RawMessage) (any, error) {
	var req webRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, err
	}
	switch req.Op {
	case "pair":
		role, err := web.ParseRole(req.Role)
		if err != nil {
			return nil, err
		}
		code, exp, err := s.Pair(req.Name, role)
		return webReply{Code: code, Expires: exp, Paused: s.PausedUntil()}, err
	case "list":
		return webReply{Devices: s.List()}, nil
	case "revoke":
		n, err := s.Revoke(req.Name)
		return webReply{Revoked: n}, err
	}
	return nil, fmt.Errorf("web: unknown op %q (pair, list, revoke)", req.Op)
}

// webFacts is what the dashboard's pages read of the daemon (the models
// and doctor's findings: web_models.go, web_doctor.go).
type webFacts struct {
	a      *app
	doctor *webDoctor
}

func (f webFacts) Pins() []web.Pin {
	pins := f.a.board.Pins()
	out := make([]web.Pin, 0, len(pins))
	for _, p := range pins {
		lv := -1
		if l, err := p.Read(); err == nil {
			lv = 0
			if l == hal.High {
				lv = 1
			}
		}
		out = append(out, web.Pin{Name: p.Name(), GPIO: p.GPIO(), Mode: string(p.Mode()), Level: lv, Output: p.Mode() == hal.ModeOut})
	}
	return out
}

func (f webFacts) Overview() []web.Fact {
	facts := []web.Fact{{Label: "version", Value: version}}
	raw, err := f.a.statusJSON()
	r, ok := raw.(statusReport)
	if err != nil || !ok {
		return append(facts, web.Fact{Label: "status", Value: fmt.Sprint("unavailable: ", err)})
	}
	add := func(label, value string) {
		if value != "" {
			facts = append(facts, web.Fact{Label: label, Value: value})
		}
	}
	add("board", r.Board)
	add("uptime", r.Uptime)
	add("Wi-Fi", r.WiFi)
	add("store", r.Store)
	add("routing", r.Strategy)
	for _, m := range r.Models {
		add("model "+m.Name, m.Model+" · "+strconv.FormatInt(m.Calls, 10)+" calls")
	}
	if r.LocalReply != nil {
		add("last local reply", r.LocalReply.Line)
	}
	add("approvals waiting", strconv.Itoa(len(r.Approvals)))
	return facts
}

func (f webFacts) Automations() []web.Automation {
	if f.a.sched == nil {
		return nil
	}
	var out []web.Automation
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04")
	}
	for _, s := range f.a.sched.List() {
		out = append(out, web.Automation{Name: s.Name, Trigger: s.Trigger, Next: when(s.Next), Last: when(s.Last), Outcome: s.Outcome, Paused: s.Paused})
	}
	return out
}

func (f webFacts) Audit(before uint64, n int) ([]store.AuditEntry, error) {
	return f.a.store.TailBefore(before, n)
}
