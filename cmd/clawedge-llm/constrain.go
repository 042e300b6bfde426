//go:build llamacpp

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/cmd/clawedge-llm/internal/tokvocab"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/localmodel/llama"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// Constrained decoding: a request's grammar.Spec compiles to a byte-level
// automaton, and grammar.MaskCache turns each automaton state into the set of
// tokens that can follow. Compiling and the first walks of the vocabulary
// trie cost milliseconds; the next turn with the same tools costs lookups,
// so the last few compiled specs are kept with their mask caches.

const (
	// keptConstraints is how many compiled specs stay cached: a policy that
	// alternates a few tool sets stays warm.
	keptConstraints = 4
	// maskBudget bounds the memory of the kept mask caches together: the
	// least recently used go first when it is exceeded, and one spec alone
	// never keeps more (its further sets are then computed at each visit).
	maskBudget = 64 << 20
)

// compiled is one spec ready for decoding.
type compiled struct {
	key   string
	c     *grammar.Constraint
	masks *grammar.MaskCache
}

// constraints is the engine's cache of compiled specs and the model's
// vocabulary prepared for masking, built at the first constrained request.
// One generation at a time uses it (the engine's rule).
type constraints struct {
	vocab *grammar.Vocab
	kept  []*compiled // most recently used first
}

// get returns the compiled spec, compiling it (and preparing the vocabulary)
// if needed.
func (cs *constraints) get(m *llama.Model, spec grammar.Spec) (*compiled, error) {
	if cs.vocab == nil {
		v, err := tokvocab.Build(m)
		if err != nil {
			return nil, err
		}
		cs.vocab = v
	}
	body, err := json.Marshal(spec)
	if err != nil {
		return nil, fmt.Errorf("constraint: %w", err)
	}
	key := string(body)
	for i, k := range cs.kept {
		if k.key == key {
			copy(cs.kept[1:i+1], cs.kept[:i])
			cs.kept[0] = k
			cs.trim() // the sets grew since the last request
			return k, nil
		}
	}
	c, err := grammar.Compile(spec)
	if err != nil {
		return nil, fmt.Errorf("constraint: %w", err)
	}
	k := &compiled{key: key, c: c, masks: grammar.NewMaskCache(c, cs.vocab)}
	k.masks.SetMemoryLimit(maskBudget)
	cs.kept = append([]*compiled{k}, cs.kept...)
	cs.trim()
	return k, nil
}

// trim drops the least recently used specs beyond the count or the memory
// budget; the newest always stays.
func (cs *constraints) trim() {
	var total int64
	for i, k := range cs.kept {
		_, mem := k.masks.Stats()
		total += mem
		if i > 0 && (i >= keptConstraints || total > maskBudget) {
			cs.kept = cs.kept[:i]
			return
		}
	}
}

// constrainedRun is the constraint's state during one generation.
type constrainedRun struct {
	*compiled
	state    int32
	output   []byte // what the automaton has read, for errors
	maskTime time.Duration
	before   int // sets computed before this generation
}

func newRun(k *compiled) *constrainedRun {
	sets, _ := k.masks.Stats()
	return &constrainedRun{compiled: k, state: k.c.Start(), before: sets}
}

// mask is the set of tokens allowed next.
func (r *constrainedRun) mask() *grammar.TokenSet {
	t := time.Now()
	set := r.masks.Allowed(r.state)
	r.maskTime += time.Since(t)
	return set
}

// advance moves the automaton over token t, which the mask allowed.
func (r *constrainedRun) advance(t llama.Token) error {
	next := r.masks.Advance(r.state, t)
	if next == grammar.Dead {
		// The mask allowed it, so this is a bug, not a model's doing.
		return fmt.Errorf("constraint: token %d (%q) was allowed in state %d but its bytes do not continue the output %s",
			t, r.masks.Vocab().Bytes(t), r.state, tail(r.output))
	}
	r.state = next
	if r.masks.Vocab().Kind(t) == grammar.TokenNormal {
		r.output = append(r.output, r.masks.Vocab().Bytes(t)...)
	}
	return nil
}

// thinking reports whether the output is inside an open <think> section.
func (r *constrainedRun) thinking() bool {
	return r.c.Spec().Think && bytes.HasPrefix(r.output, []byte(grammar.ThinkOpen)) &&
		!bytes.Contains(r.output, []byte(grammar.ThinkClose))
}

// thinkEnd is what the runner writes to close a think section past its
// budget: what Qwen3 writes itself.
const thinkEnd = "\n" + grammar.ThinkClose + "\n\n"

// stuck is the error when no token can continue the output.
func (r *constrainedRun) stuck(allowed int) error {
	why := "no token of the vocabulary continues it"
	if allowed > 0 {
		why = fmt.Sprintf("none of the %d tokens that would continue it has a finite logit", allowed)
	}
	return fmt.Errorf("constraint: generation cannot go on: %s (automaton state %d, output so far %s)", why, r.state, tail(r.output))
}

// tail quotes the end of the output, for errors.
func tail(b []byte) string {
	const keep = 120
	if len(b) > keep {
		return fmt.Sprintf("…%q (%d bytes)", b[len(b)-keep:], len(b))
	}
	return fmt.Sprintf("%q", b)
}

// finish fills the constraint's part of the done message.
func (r *constrainedRun) finish(d *wire.Done) {
	d.Incomplete = !r.c.Accepting(r.state)
	d.MaskMS = ms(r.maskTime)
	sets, _ := r.masks.Stats()
	d.MaskStates = sets - r.before
}
