// Package router is an llm.Provider that chooses, for each call, which of
// several declared providers answers: the local model on the board or a
// remote one. It filters out providers that cannot take the request (a
// prompt longer than their window, tools they do not support), orders the
// rest by a strategy, and goes to the next one when a provider refuses
// (llm.ErrCapacity), fails (llm.ErrUnavailable), or, for the local model,
// is busy for longer than a budget. Every reply says who answered and why
// (Final.Provider, Final.Model, Final.Route) and what it cost (Final.Cost),
// and the router keeps totals per provider (Stats).
//
// A reply is never switched to another provider once text of it has reached
// the caller: a failure after that is returned as it is, since the caller
// may already have shown the text.
package router

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/clawedge/clawedge/llm"
)

// Strategy is how the router orders the providers for a call.
type Strategy string

// The strategies. Each orders the providers that can take the request; the
// first answers, and the next ones are there for when it fails. Ties keep
// the fallback order (Options.Order, then the declared order).
const (
	// LocalFirst: the local model, unless its capacity is exceeded (a
	// prompt longer than its window, a refusal or a crash of the runner,
	// a queue wait over Options.LocalQueueBudget, an escalation (llm.Request.Escalations) from the
	// agent); then the remote ones in the fallback order.
	LocalFirst Strategy = "local-first"
	// Quality: the highest quality score first.
	Quality Strategy = "quality"
	// Speed: the highest speed score first.
	Speed Strategy = "speed"
	// Cost: the cheapest estimated cost of this call first; among equally
	// cheap ones, the best quality first.
	Cost Strategy = "cost"
	// Balanced: the highest weighted score first; see BalancedScore.
	Balanced Strategy = "balanced"
	// Fallback: the fallback order; any failure goes to the next one.
	Fallback Strategy = "fallback"
	// Cascade: the cheapest first and, among equally cheap ones, the
	// weakest first; any failure goes to the next one, and so does an
	// answer the agent marks insufficient (an llm.Escalation), so that a call
	// climbs only as far up in cost as it needs to.
	Cascade Strategy = "cascade"
)

// Strategies lists every strategy, in the order documentation shows them.
var Strategies = []Strategy{LocalFirst, Quality, Speed, Cost, Balanced, Fallback, Cascade}

// Scores are on a 1 to 10 scale, 10 best: people set them in the config
// ("quality: 8"), and a scale with no fractions needed reads better there
// than 0 to 1. A zero score in an Entry means DefaultScore: no opinion.
const (
	MinScore     = 1
	MaxScore     = 10
	DefaultScore = 5
)

// ExpectedReply is how many reply tokens the cost estimate of a call
// assumes when the request sets no MaxTokens.
const ExpectedReply = 256

// Entry declares one provider to the router.
type Entry struct {
	Provider llm.Provider
	// Name identifies it in routes, stats, Options.Order and escalations (llm.Escalation.From);
	// "" means Provider.Name().
	Name string
	// Model is reported in Final.Model when the provider leaves it empty.
	Model string
	// Context is the window in tokens; 0 takes Provider.Caps().Context,
	// and 0 there means unknown: the entry is then never filtered out for
	// the prompt's length (the provider refuses a prompt too long itself).
	Context int
	// CostIn and CostOut are what 1,000 prompt and reply tokens cost, in
	// whatever currency the user thinks in. Local models cost 0.
	CostIn, CostOut float64
	// Quality and Speed are scores from MinScore to MaxScore (10 best);
	// 0 means DefaultScore.
	Quality, Speed float64
	// NoTools keeps requests with tools away from a provider whose Caps
	// say it takes tools (a model that is bad at them; config tools:
	// false). A provider whose Caps say it does not take tools never gets
	// them either way.
	NoTools bool
}

// Options configure a Router; the zero value is usable.
type Options struct {
	// Strategy; "" is LocalFirst.
	Strategy Strategy
	// Order is the fallback order by name. Providers not listed follow,
	// in the order they were declared. It is also the tie-break of every
	// strategy.
	Order []string
	// LocalQueueBudget bounds how long a call waits for a local provider
	// busy with another call before going to the next provider; 0 waits
	// as long as the call's context allows. The router runs one call at a
	// time per local provider, since a board runs one generation at a
	// time. A call that has no other provider to go to always waits.
	LocalQueueBudget time.Duration
	// Totals are the stats to count on from (a previous run's, read back
	// by whoever persisted them), matched by Name; others are ignored.
	Totals []Stats
}

// Router is an llm.Provider over the declared entries. It is safe for
// concurrent use.
type Router struct {
	strategy Strategy
	budget   time.Duration
	entries  []*entry // in fallback order
	caps     llm.Caps

	mu sync.Mutex // guards every entry's stats
}

// entry is an Entry with its defaults resolved and its running totals.
type entry struct {
	Entry
	local bool
	tools bool
	// slot is held while a call of a local provider runs; nil for
	// remote ones.
	slot  chan struct{}
	stats Stats
}

// New returns a router over entries, which must have distinct names.
func New(entries []Entry, opts Options) (*Router, error) {
	if opts.Strategy == "" {
		opts.Strategy = LocalFirst
	}
	if !slices.Contains(Strategies, opts.Strategy) {
		return nil, fmt.Errorf("router: unknown strategy %q (want one of %v)", opts.Strategy, Strategies)
	}
	if len(entries) == 0 {
		return nil, errors.New("router: no providers")
	}
	r := &Router{strategy: opts.Strategy, budget: opts.LocalQueueBudget}
	byName := map[string]*entry{}
	var declared []*entry
	for i, en := range entries {
		if en.Provider == nil {
			return nil, fmt.Errorf("router: entry %d has no provider", i)
		}
		caps := en.Provider.Caps()
		e := &entry{Entry: en, local: caps.Local, tools: caps.Tools && !en.NoTools}
		if e.Name == "" {
			e.Name = en.Provider.Name()
		}
		if e.Context == 0 {
			e.Context = caps.Context
		}
		for _, f := range []struct {
			what string
			v    *float64
		}{{"quality", &e.Quality}, {"speed", &e.Speed}} {
			if *f.v == 0 {
				*f.v = DefaultScore
			}
			if *f.v < MinScore || *f.v > MaxScore || math.IsNaN(*f.v) {
				return nil, fmt.Errorf("router: %s: %s %v is not a score from %d to %d", e.Name, f.what, *f.v, MinScore, MaxScore)
			}
		}
		if e.CostIn < 0 || e.CostOut < 0 || math.IsNaN(e.CostIn) || math.IsNaN(e.CostOut) {
			return nil, fmt.Errorf("router: %s: costs must not be negative", e.Name)
		}
		if e.Context < 0 {
			return nil, fmt.Errorf("router: %s: negative context window", e.Name)
		}
		if _, dup := byName[e.Name]; dup {
			return nil, fmt.Errorf("router: two providers are named %q", e.Name)
		}
		if e.local {
			e.slot = make(chan struct{}, 1)
		}
		e.stats = Stats{Name: e.Name, Model: e.Model, Local: e.local}
		byName[e.Name] = e
		declared = append(declared, e)
	}
	for _, name := range opts.Order {
		e, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("router: order names %q, which is not a provider", name)
		}
		if slices.Contains(r.entries, e) {
			return nil, fmt.Errorf("router: order lists %q twice", name)
		}
		r.entries = append(r.entries, e)
	}
	for _, e := range declared {
		if !slices.Contains(r.entries, e) {
			r.entries = append(r.entries, e)
		}
	}
	for _, t := range opts.Totals {
		if e, ok := byName[t.Name]; ok {
			e.stats.add(t)
		}
	}

	r.caps.Local = true
	for _, e := range r.entries {
		c := e.Provider.Caps()
		r.caps.Context = max(r.caps.Context, e.Context)
		r.caps.Local = r.caps.Local && e.local
		r.caps.Tools = r.caps.Tools || e.tools
		r.caps.Grammar = r.caps.Grammar || c.Grammar
	}
	return r, nil
}

// Name is "router".
func (r *Router) Name() string { return "router" }

// Caps are what the router can do with some provider: the largest window,
// tools and grammar if any provider has them, Local only if every provider
// is local.
func (r *Router) Caps() llm.Caps { return r.caps }

// Strategy is the strategy in use.
func (r *Router) Strategy() Strategy { return r.strategy }

// Chat chooses a provider and starts its reply. When a provider fails
// before any text of its reply reached the caller, the next one is tried,
// within Chat or within the stream's Next; when every one fails, the error
// is an *Error listing each provider and why.
func (r *Router) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	s := &stream{r: r, ctx: ctx, req: req, start: time.Now()}
	s.plan = r.plan(ctx, req)
	if err := s.open(); err != nil {
		return nil, err
	}
	return s, nil
}

var _ llm.Provider = (*Router)(nil)
