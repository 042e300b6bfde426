package router

import "time"

// Stats are a provider's totals since the router started (plus the
// Options.Totals it was given). JSON keys are stable, for whoever persists
// them.
type Stats struct {
	Name  string `json:"name"`
	Model string `json:"model,omitempty"`
	Local bool   `json:"local"`
	// Calls counts the calls of the provider's Chat; each ends as a
	// reply, a failure, or a reply the caller closed early.
	Calls    int64 `json:"calls"`
	Replies  int64 `json:"replies"`
	Failures int64 `json:"failures"`
	// Skips counts the calls the router passed the provider over without
	// calling it: the prompt too long for it, tools it does not take, a
	// queue wait over the budget, an escalation past it.
	Skips     int64   `json:"skips"`
	TokensIn  int64   `json:"tokens_in"`
	TokensOut int64   `json:"tokens_out"`
	Cost      float64 `json:"cost"`
	// Latency is the total time of the replies, from the provider's Chat
	// to its final chunk.
	Latency   time.Duration `json:"latency_ns"`
	LastRoute string        `json:"last_route,omitempty"`
	LastError string        `json:"last_error,omitempty"`
	LastUsed  time.Time     `json:"last_used,omitzero"`
}

// add counts t's totals in s.
func (s *Stats) add(t Stats) {
	s.Calls += t.Calls
	s.Replies += t.Replies
	s.Failures += t.Failures
	s.Skips += t.Skips
	s.TokensIn += t.TokensIn
	s.TokensOut += t.TokensOut
	s.Cost += t.Cost
	s.Latency += t.Latency
	if s.LastRoute == "" {
		s.LastRoute = t.LastRoute
	}
	if s.LastError == "" {
		s.LastError = t.LastError
	}
	if t.LastUsed.After(s.LastUsed) {
		s.LastUsed = t.LastUsed
	}
}

// Stats returns a snapshot of every provider's totals, in the fallback
// order.
func (r *Router) Stats() []Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Stats, len(r.entries))
	for i, e := range r.entries {
		out[i] = e.stats
	}
	return out
}

// count updates e's totals.
func (r *Router) count(e *entry, f func(*Stats)) {
	r.mu.Lock()
	f(&e.stats)
	r.mu.Unlock()
}
