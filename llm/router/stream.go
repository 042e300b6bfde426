package router

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/llm"
)

// stream is a reply through the router: the current provider's stream,
// and what is needed to go to the next provider while no text has reached
// the caller.
type stream struct {
	r     *Router
	ctx   context.Context
	req   llm.Request
	start time.Time
	plan  *plan

	// attempts are the candidates passed over or failed so far, with why.
	attempts []Attempt

	cur     llm.Stream
	cand    *candidate
	release func()    // frees a local provider's slot; never nil while cur is set
	began   time.Time // when cur's Chat was called
	started bool      // text of cur's reply reached the caller
	first   time.Duration
	bytes   int // of reply text, for the cost when the provider gives no usage
	done    bool
	err     error
}

// queueError is the queue budget running out; it is a capacity problem of
// the local provider.
type queueError struct{ budget time.Duration }

func (e queueError) Error() string {
	return fmt.Sprintf("capacity exceeded (busy: queue wait over the %s budget)", e.budget)
}
func (queueError) Unwrap() error { return llm.ErrCapacity }

// open starts the next candidate that takes the call.
func (s *stream) open() error {
	p := s.plan
	for p.next < len(p.cands) {
		c := &p.cands[p.next]
		p.next++
		if c.skip != nil {
			s.passOver(c, c.skip, false)
			continue
		}
		release, err := s.acquire(c)
		if err != nil {
			if errors.As(err, new(queueError)) {
				s.passOver(c, err, false)
				continue
			}
			return s.finish(fmt.Errorf("router: waiting for %s: %w", c.e.Name, err))
		}
		began := time.Now()
		s.r.count(c.e, func(st *Stats) { st.Calls++ })
		st, err := c.e.Provider.Chat(s.ctx, s.req)
		if err != nil {
			release()
			s.passOver(c, err, true)
			if !s.fallsOver(err) {
				return s.finish(fmt.Errorf("router: %s: %w", c.e.Name, err))
			}
			continue
		}
		s.cur, s.cand, s.release, s.began = st, c, release, began
		s.started, s.bytes = false, 0
		return nil
	}
	if len(s.attempts) == 0 {
		return s.finish(fmt.Errorf("router: no provider: %w", llm.ErrUnavailable))
	}
	return s.finish(&Error{Attempts: s.attempts})
}

// passOver records why c did not answer; failed marks a failure of a call
// (counted in its stats) rather than a skip.
func (s *stream) passOver(c *candidate, err error, failed bool) {
	s.attempts = append(s.attempts, Attempt{Provider: c.e.Name, Err: err})
	s.r.count(c.e, func(st *Stats) {
		if failed {
			st.Failures++
			st.LastError = oneLine(err.Error())
		} else {
			st.Skips++
		}
	})
}

// fallsOver reports whether a failure before any text goes to the next
// provider: a refusal or an outage always does, any other error in the
// Fallback and Cascade strategies, and never the caller's own
// cancellation or deadline.
func (s *stream) fallsOver(err error) bool {
	if s.ctx.Err() != nil {
		return false
	}
	if errors.Is(err, llm.ErrCapacity) || errors.Is(err, llm.ErrUnavailable) {
		return true
	}
	return s.r.strategy == Fallback || s.r.strategy == Cascade
}

// acquire takes the slot of a local provider. It waits at most the queue
// budget when another provider could take the call instead.
func (s *stream) acquire(c *candidate) (func(), error) {
	slot := c.e.slot
	if slot == nil {
		return func() {}, nil
	}
	var once sync.Once
	release := func() { once.Do(func() { <-slot }) }
	select {
	case slot <- struct{}{}:
		return release, nil
	default:
	}
	var timeout <-chan time.Time
	if b := s.r.budget; b > 0 && s.plan.more() {
		t := time.NewTimer(b)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case slot <- struct{}{}:
		return release, nil
	case <-timeout:
		return nil, queueError{s.r.budget}
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

// more reports whether a candidate after the current one could be called.
func (p *plan) more() bool {
	for _, c := range p.cands[p.next:] {
		if c.skip == nil {
			return true
		}
	}
	return false
}

// Next returns the next chunk of the reply. A failure before any text
// reached the caller goes to the next provider; after that, it is returned.
func (s *stream) Next() (llm.Chunk, error) {
	for {
		if s.done {
			if s.err != nil {
				return llm.Chunk{}, s.err
			}
			return llm.Chunk{}, io.EOF
		}
		c, err := s.cur.Next()
		if err == io.EOF {
			err = fmt.Errorf("the reply ended without its final chunk: %w", llm.ErrUnavailable)
		}
		if err != nil {
			cand := s.cand
			s.drop()
			s.passOver(cand, err, true)
			if s.started || !s.fallsOver(err) {
				return llm.Chunk{}, s.finish(fmt.Errorf("router: %s: %w", cand.e.Name, err))
			}
			if err := s.open(); err != nil {
				return llm.Chunk{}, err
			}
			continue
		}
		if c.Text != "" {
			if !s.started {
				s.started = true
				s.first = time.Since(s.start)
			}
			s.bytes += len(c.Text)
		}
		if c.Final != nil {
			s.complete(c.Final)
		}
		return c, nil
	}
}

// complete fills in the final chunk and counts the reply.
func (s *stream) complete(f *llm.Final) {
	c, e := s.cand, s.cand.e
	f.Provider = e.Name
	if f.Model == "" {
		f.Model = e.Model
	}
	f.Route = s.route()
	in, out := f.Usage.PromptTokens, f.Usage.CompletionTokens
	if in == 0 {
		in = c.tokens
	}
	if out == 0 && s.bytes > 0 {
		out = (s.bytes*2 + bytesPerTokenX2 - 1) / bytesPerTokenX2
	}
	if e.CostIn != 0 || e.CostOut != 0 || f.Cost == 0 {
		f.Cost = cost(e, in, out)
	}
	if f.Timing.FirstToken == 0 {
		f.Timing.FirstToken = s.first
	}
	latency := time.Since(s.began)
	route := f.Route
	s.r.count(e, func(st *Stats) {
		st.Replies++
		st.TokensIn += int64(in)
		st.TokensOut += int64(out)
		st.Cost += f.Cost
		st.Latency += latency
		st.LastRoute = route
		st.LastUsed = time.Now()
	})
	s.drop()
	s.done = true
}

// route says who answered and why: "local-first: local", "local-first:
// remote lan after local: capacity exceeded (prompt 9,120 tokens > window
// 4,096)".
func (s *stream) route() string {
	var b strings.Builder
	b.WriteString(string(s.r.strategy))
	b.WriteString(": ")
	b.WriteString(who(s.cand.e))
	switch s.r.strategy {
	case Quality:
		fmt.Fprintf(&b, " (quality %g)", s.cand.e.Quality)
	case Speed:
		fmt.Fprintf(&b, " (speed %g)", s.cand.e.Speed)
	case Cost, Cascade:
		fmt.Fprintf(&b, " (est. cost %.4g)", s.cand.cost)
	case Balanced:
		fmt.Fprintf(&b, " (score %.2f)", s.cand.score)
	}
	for i, a := range s.attempts {
		if i == 0 {
			b.WriteString(" after ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(a.Provider)
		b.WriteString(": ")
		b.WriteString(oneLine(a.Err.Error()))
	}
	if s.plan.ignored != "" {
		b.WriteString(" (" + s.plan.ignored + ")")
	}
	return b.String()
}

// who names a provider with its tier: "local" for the local model named
// local, else "local NAME" or "remote NAME".
func who(e *entry) string {
	if e.local {
		if e.Name == "local" {
			return "local"
		}
		return "local " + e.Name
	}
	return "remote " + e.Name
}

// drop closes the current provider's stream and frees its slot.
func (s *stream) drop() {
	if s.cur != nil {
		s.cur.Close()
		s.release()
		s.cur, s.release = nil, nil
	}
}

// finish ends the reply with err.
func (s *stream) finish(err error) error {
	s.drop()
	s.done, s.err = true, err
	return err
}

// Close stops the reply and frees the provider. It is safe to call at any
// time, more than once.
func (s *stream) Close() error {
	if !s.done {
		s.finish(errors.New("router: stream closed"))
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
