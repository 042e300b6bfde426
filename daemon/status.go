package daemon

import (
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/policy"
)

// StatusReport is what `clawedge status` shows; its JSON (--json, and the control
// socket's status op) keeps these keys.
type StatusReport struct {
	Version  string `json:"version"`
	Daemon   bool   `json:"daemon"`
	Uptime   string `json:"uptime,omitempty"`
	Board    string `json:"board,omitempty"`
	Strategy string `json:"strategy,omitempty"`
	// WiFi is the radio's state: "no radio (wlan0 absent)", `wlan0 joined
	// "Home", signal -52 dBm` (wifi.go).
	WiFi string `json:"wifi,omitempty"`
	// Models are the router's totals per model, over runs (persisted at each turn).
	Models []router.Stats `json:"models"`
	// Routes counts, per provider, why it was chosen (this run of the daemon).
	Routes    map[string]map[string]int `json:"routes,omitempty"`
	Sessions  []agent.SessionInfo       `json:"sessions"`
	Approvals []policy.Pending          `json:"approvals"`
	// Automations is the scheduler's state (the daemon only; automations.go).
	Automations *AutoReply `json:"automations,omitempty"`
	// Goals are the goals still pursued (the daemon only; goals.go).
	Goals []goals.Goal `json:"goals,omitempty"`
	// Store is how full the store is (storeusage.go).
	Store string `json:"store,omitempty"`
	// LocalReply is the local model's last reply in this run of the daemon
	// (none yet: absent): how many of its prompt tokens were cached, and how
	// many of those came from the prefix state saved on disk.
	LocalReply *LocalReply `json:"local_reply,omitempty"`
}

type LocalReply struct {
	PromptTokens int     `json:"prompt_tokens"`
	CachedTokens int     `json:"cached_tokens"`
	SavedTokens  int     `json:"saved_tokens"`
	FirstTokenMS float64 `json:"first_token_ms"`
	Line         string  `json:"line"` // llm.Final.Speed
}

// statusJSON is the daemon's answer to the control socket's status op.
func (a *Core) statusJSON() (any, error) {
	r := StatusReport{Version: a.version, Daemon: true, Uptime: time.Since(a.started).Round(time.Second).String(),
		Board: a.board.Driver(), Models: []router.Stats{}, Sessions: []agent.SessionInfo{}, Approvals: []policy.Pending{}}
	if a.cfg != nil {
		r.WiFi, _ = WiFiInfo(a.cfg.Network)
	}
	if u, err := a.store.Usage(); err == nil {
		r.Store = UsageLine(u)
	}
	if a.local != nil {
		if f := a.local.LastReply(); f != nil {
			r.LocalReply = &LocalReply{PromptTokens: f.Usage.PromptTokens, CachedTokens: f.Usage.CachedTokens,
				SavedTokens: f.Usage.SavedTokens, FirstTokenMS: float64(f.Timing.FirstToken.Microseconds()) / 1000, Line: f.Speed()}
		}
	}
	if a.auth != nil { // every door's calls waiting for a person, not only the model's
		r.Approvals = append(r.Approvals, a.auth.List()...)
	}
	if a.router != nil {
		r.Strategy = string(a.router.Strategy())
		r.Models = a.router.Stats()
	}
	if a.agent != nil {
		st, err := a.agent.Status()
		if err != nil {
			return nil, err
		}
		r.Sessions = st.Sessions
		for _, m := range st.Models {
			if len(m.Routes) == 0 {
				continue
			}
			if r.Routes == nil {
				r.Routes = map[string]map[string]int{}
			}
			r.Routes[m.Provider] = m.Routes
		}
	} else if a.store != nil {
		r.Sessions, _ = agent.StoredSessions(a.store)
	}
	if r.Sessions == nil {
		r.Sessions = []agent.SessionInfo{}
	}
	if a.sched != nil {
		ar, _ := AutoDo(a.sched, AutoRequest{Op: "list"})
		r.Automations = &ar
	}
	if a.goals != nil {
		for _, g := range a.goals.List() {
			if !g.State.Finished() {
				r.Goals = append(r.Goals, g)
			}
		}
	}
	return r, nil
}
