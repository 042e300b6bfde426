package daemon

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/store"
)

// The dashboard (web: {listen: ...}; docs/web.md): served by the daemon;
// browsers are paired and revoked by the web/* tools (channels/web), on the
// call path. Off while the section is absent.

// serveWeb serves the dashboard when configured (its chat answered by
// chat, the daemon's Dispatcher). A listen address in use or a bad
// certificate is logged, not fatal: the board's work goes on.
func (a *Core) serveWeb(ctx context.Context, wg *sync.WaitGroup, chat channels.Handler) {
	wc, sessions := a.cfg.Web, a.webSessions
	if wc == nil || sessions == nil {
		return
	}
	var cert *tls.Certificate
	if wc.TLSCert != "" {
		c, err := tls.LoadX509KeyPair(wc.TLSCert, wc.TLSKey)
		if err != nil {
			a.log.Warn("web: no dashboard: the certificate does not load", "err", err)
			return
		}
		cert = &c
	}
	ln, err := net.Listen("tcp", wc.Listen)
	if err != nil {
		a.log.Warn("web: cannot listen; no dashboard", "listen", wc.Listen, "err", err)
		return
	}
	s := &web.Server{Runner: a.runner, Auth: a.auth, Sessions: sessions, Facts: webFacts{a: a, doctor: &webDoctor{a: a}}, Chat: chat, Names: wc.Names, TLS: cert != nil, Log: a.log}
	s.Sensors = a.webSensors(ctx, wg) // web_sensors.go
	if a.goals != nil {
		s.Goals = webGoals{a.goals} // web_goals.go
	}
	if a.mem != nil {
		s.Memory = webMemory{a.mem} // web_memory.go
	}
	s.Skills = webSkills{a: a} // web_skills.go
	s.Setup = a.setupFacts     // web_setup.go
	scheme := "http"
	if cert != nil {
		scheme = "https"
	}
	a.log.Info("web: serving the dashboard", "url", scheme+"://"+ln.Addr().String()+"/")
	a.startFirstPairing(ctx, wg, os.Stderr) // first_pairing.go: the console, under clawedge-init
	wg.Go(func() {
		if err := s.Serve(ctx, ln, cert); err != nil {
			a.log.Warn("web: server stopped", "err", err)
		}
	})
}

// webClock is the dashboard sessions' clock; nil: time.Now (tests move it).
var webClock func() time.Time

// openWebSessions opens the dashboard's paired browsers, with the store,
// before the tools are registered: web/pair issues their codes. nil: no
// dashboard.
func (a *Core) openWebSessions() {
	if a.cfg.Web == nil {
		return
	}
	s, err := web.OpenSessions(a.store, webClock)
	if err != nil {
		a.log.Warn("web: no dashboard", "err", err)
		return
	}
	s.SetExpiry(time.Duration(a.cfg.Web.SessionIdle), time.Duration(a.cfg.Web.SessionMax))
	a.webSessions = s
}

// webFacts is what the dashboard's pages read of the daemon (the models
// and doctor's findings: web_models.go, web_doctor.go).
type webFacts struct {
	a      *Core
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
	facts := []web.Fact{{Label: "version", Value: f.a.version}}
	raw, err := f.a.statusJSON()
	r, ok := raw.(StatusReport)
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
