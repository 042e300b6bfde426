package router

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/clawedge/clawedge/llm"
)

// plan is the ordered list of providers for one call.
type plan struct {
	cands []candidate
	next  int // the next candidate to try
	// ignored notes an escalation that was not followed because no
	// provider comes after the one escalated from.
	ignored string
}

// candidate is one provider in a plan.
type candidate struct {
	e      *entry
	tokens int     // the prompt, estimated or counted for this provider
	cost   float64 // estimated cost of the call
	score  float64 // the balanced score
	// skip, when set, is why the candidate is passed over without being
	// called: the prompt does not fit, tools are needed, an escalation.
	skip error
}

// plan orders the entries for req by the strategy and marks the ones that
// cannot take it.
func (r *Router) plan(ctx context.Context, req llm.Request) *plan {
	p := &plan{cands: make([]candidate, len(r.entries))}
	estimate := -1
	maxCost := 0.0
	for i, e := range r.entries {
		c := candidate{e: e, tokens: -1}
		if tc, ok := e.Provider.(TokenCounter); ok && e.Context > 0 {
			if n, err := tc.CountTokens(ctx, req); err == nil && n >= 0 {
				c.tokens = n
			}
		}
		if c.tokens < 0 {
			if estimate < 0 {
				estimate = EstimateTokens(req)
			}
			c.tokens = estimate
		}
		out := req.MaxTokens
		if out <= 0 {
			out = ExpectedReply
		}
		c.cost = cost(e, c.tokens, out)
		maxCost = max(maxCost, c.cost)
		switch {
		case e.Context > 0 && c.tokens > e.Context:
			c.skip = reason{fmt.Sprintf("capacity exceeded (prompt %s tokens > window %s)", thousands(c.tokens), thousands(e.Context)), llm.ErrCapacity}
		case len(req.Tools) > 0 && !e.tools:
			c.skip = reason{"tools not supported", llm.ErrCapacity}
		}
		p.cands[i] = c
	}
	for i := range p.cands {
		p.cands[i].score = BalancedScore(p.cands[i].e.Quality, p.cands[i].e.Speed, p.cands[i].cost, maxCost)
	}

	// r.entries is in the fallback order, and the sorts are stable, so
	// ties keep it.
	by := func(f func(a, b *candidate) int) {
		slices.SortStableFunc(p.cands, func(a, b candidate) int { return f(&a, &b) })
	}
	switch r.strategy {
	case LocalFirst:
		by(func(a, b *candidate) int { return cmpBool(b.e.local, a.e.local) })
	case Quality:
		by(func(a, b *candidate) int { return cmp.Compare(b.e.Quality, a.e.Quality) })
	case Speed:
		by(func(a, b *candidate) int { return cmp.Compare(b.e.Speed, a.e.Speed) })
	case Cost:
		by(func(a, b *candidate) int {
			return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(b.e.Quality, a.e.Quality))
		})
	case Balanced:
		by(func(a, b *candidate) int { return cmp.Compare(b.score, a.score) })
	case Cascade:
		by(func(a, b *candidate) int {
			return cmp.Or(cmp.Compare(a.cost, b.cost), cmp.Compare(a.e.Quality, b.e.Quality))
		})
	case Fallback:
	}

	p.escalate(req.Escalations)
	return p
}

// escalate applies the request's escalations: every candidate up to the
// furthest one escalated from is passed over, unless that leaves nothing
// to call. Of escalations from the same provider, the latest one's reason
// is shown.
func (p *plan) escalate(escs []llm.Escalation) {
	last, why := -1, ""
	for _, x := range slices.Backward(escs) {
		for i, c := range p.cands {
			if c.e.Name == x.From && i > last {
				last, why = i, x.Reason
			}
		}
	}
	if last < 0 {
		return
	}
	usable := false
	for _, c := range p.cands[last+1:] {
		usable = usable || c.skip == nil
	}
	if !usable {
		p.ignored = fmt.Sprintf("escalation past %s ignored: no provider after it", p.cands[last].e.Name)
		return
	}
	for i := 0; i <= last; i++ {
		if p.cands[i].skip == nil {
			p.cands[i].skip = reason{"escalated (" + why + ")", nil}
		}
	}
}

// BalancedScore is the Balanced strategy's score, from 0 to 1:
//
//	0.4·quality + 0.3·speed + 0.3·cheapness
//
// with quality and speed mapped from 1..10 to 0..1, and cheapness 1 for a
// call that costs nothing, 0 for the dearest call among the providers
// considered (maxCost), linear in between. Quality weighs most because a
// wrong answer costs a retry; speed and cost weigh the same.
func BalancedScore(quality, speed, cost, maxCost float64) float64 {
	unit := func(s float64) float64 { return (s - MinScore) / (MaxScore - MinScore) }
	cheap := 1.0
	if maxCost > 0 {
		cheap = 1 - cost/maxCost
	}
	return 0.4*unit(quality) + 0.3*unit(speed) + 0.3*cheap
}

// cost is what in prompt and out reply tokens cost on e.
func cost(e *entry, in, out int) float64 {
	return (float64(in)*e.CostIn + float64(out)*e.CostOut) / 1000
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// reason is why a candidate was passed over, wrapping llm.ErrCapacity
// when the request does not fit it.
type reason struct {
	msg string
	err error
}

func (r reason) Error() string { return r.msg }
func (r reason) Unwrap() error { return r.err }

// thousands writes n with comma separators: 9120 → "9,120".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	if neg {
		return "-" + string(b)
	}
	return string(b)
}
