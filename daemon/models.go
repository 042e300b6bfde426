package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/anthropic"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/remote"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/store"
)

// localName is the local model's name in routes, stats and models.router.order.
const localName = "local"

// The router's totals survive restarts in the store's kv, so `clawedge status`
// shows the board's history, not just this run's.
const (
	kvAgent      = "agent"
	kvRouterTots = "router_totals"
)

// models builds the provider of free text from the config: the router over the local
// model and the remote ones (the router fills every reply's route and cost and keeps
// the totals `clawedge status` shows). nil without any model. compact and window say
// that the local model may answer, so the agent builds the local tier's small prompt
// for its window.
func (a *Core) models() (p llm.Provider, compact bool, window int, err error) {
	m := a.cfg.Models
	var entries []router.Entry
	if l := m.Local; l != nil {
		c, err := localClient(l, a)
		if err != nil {
			return nil, false, 0, fmt.Errorf("models.local: %w", err)
		}
		a.local = c
		entries = append(entries, router.Entry{Provider: c, Name: localName, Context: l.Context,
			Quality: l.Quality, Speed: l.Speed})
		compact, window = true, l.Context
	}
	for i, r := range m.Remote {
		rp, err := RemoteProvider(r)
		if err != nil {
			return nil, false, 0, fmt.Errorf("models.remote[%d] (%s): %w", i, r.Name, err)
		}
		if a.remote == nil {
			a.remote = rp
		}
		entries = append(entries, router.Entry{Provider: rp, Name: r.Name, Model: r.Model, Context: r.Context,
			CostIn: r.CostIn, CostOut: r.CostOut, Quality: r.Quality, Speed: r.Speed, NoTools: !r.Tools})
	}
	if len(entries) == 0 {
		return nil, false, 0, nil
	}
	opts := router.Options{Strategy: router.Strategy(m.Router.Strategy), Order: m.Router.Order,
		LocalQueueBudget: time.Duration(m.Router.LocalQueueBudget), Totals: SavedTotals(a.store)}
	rt, err := router.New(entries, opts)
	if err != nil {
		return nil, false, 0, err
	}
	a.router = rt
	return rt, compact, window, nil
}

// RemoteProvider makes one models.remote entry's provider. Keys go to the provider
// only; its errors never contain them.
func RemoteProvider(r config.RemoteModel) (llm.Provider, error) {
	o := remote.Options{Name: r.Name, BaseURL: r.BaseURL, Model: r.Model, APIKey: r.APIKey.Reveal(),
		Context: r.Context, Timeout: time.Duration(r.Timeout),
		Sampling: &llm.Sampling{Temperature: float32(r.Temperature), Seed: r.Seed}}
	switch r.Kind {
	case "openai":
		return openai.New(openai.Options{Options: o, Constraint: openai.Style(r.Constraint)})
	case "anthropic":
		return anthropic.New(anthropic.Options{Options: o})
	}
	return nil, errors.New("kind " + r.Kind + ": want openai or anthropic")
}

// SavedTotals reads the router totals the last run stored in st.
func SavedTotals(st *store.Store) []router.Stats {
	if st == nil {
		return nil
	}
	raw, ok, err := st.Get(kvAgent, kvRouterTots)
	if err != nil || !ok {
		return nil
	}
	var s []router.Stats
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	return s
}

// saveTotals stores the router totals (at shutdown, and after turns).
func (a *Core) saveTotals() {
	if a.router == nil || a.store == nil {
		return
	}
	raw, err := json.Marshal(a.router.Stats())
	if err == nil {
		err = a.store.Put(kvAgent, kvRouterTots, raw)
	}
	if err != nil {
		a.log.Warn("saving the model totals", "err", err)
	}
}

var _ llm.Provider = (*localmodel.Client)(nil)
