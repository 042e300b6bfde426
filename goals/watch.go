package goals

// This file: watching what a check reads. A goal waiting for the world is
// judged when what its check reads changes, not only at intervals: the
// daemon knows when a pin's level changes (its edges) and, with sensors,
// each new sample; the runtime asks a Source to watch a check's read and
// polls (Options.Poll) the reads no source watches. Feed is the Source the
// daemon pushes those events into.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Source tells the runtime when what a check reads has changed.
type Source interface {
	// Watch returns the changes of read (a check's read in the command
	// language, "@gpio/read{pin=\"door\"}") until ctx ends, when the
	// channel is closed. ok false: it does not watch that read, and the
	// runtime polls it every Options.Poll while a goal waits on it.
	Watch(ctx context.Context, read string) (changes <-chan Change, ok bool)
}

// Change is one change of a watched read. It only says when to judge: the
// judgement reads the check again on the call path (audited, charged to the
// goal's reads, decided by its owner's policy), so a value fed here never
// decides a goal by itself.
type Change struct {
	At    time.Time
	Value float64 // what the read now says, on the source's own scale (a pin: 1 high, 0 low)
}

// PinRead is the check's read of pin, as a goal's check writes it: the read
// a Feed is given a pin's edges for.
func PinRead(pin string) string {
	return tools.CommandText("gpio/read", []grammar.Param{{Key: "pin", Value: grammar.StringValue(pin)}})
}

// Feed is a Source the daemon pushes into: it says which reads it feeds
// (Provide), then each change of them (Pin for a pin's edge, Publish for a
// sensor's sample). A watcher slower than the changes gets the newest: a
// judgement wants what the read says now, not every bounce of a contact.
// The zero Feed is ready to use.
type Feed struct {
	mu       sync.Mutex
	provided map[string]bool
	subs     map[string]map[*feedSub]bool
}

type feedSub struct{ c chan Change }

// Provide says the daemon feeds the changes of each read (a pin with edge
// detection: PinRead(name); a sensor it samples: its read command).
func (f *Feed) Provide(reads ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.provided == nil {
		f.provided = map[string]bool{}
	}
	for _, r := range reads {
		k, err := readKey(r)
		if err != nil {
			return fmt.Errorf("goals feed: %w", err)
		}
		f.provided[k] = true
	}
	return nil
}

// Pin feeds an edge of pin: its level is now high or low.
func (f *Feed) Pin(pin string, high bool, at time.Time) {
	v := 0.0
	if high {
		v = 1
	}
	f.Publish(PinRead(pin), v, at)
}

// Publish feeds a change of read: it now says value. A read nobody watches
// is dropped.
func (f *Feed) Publish(read string, value float64, at time.Time) {
	k, err := readKey(read)
	if err != nil {
		return // no goal's check can be a read that does not parse
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs[k] {
		ch := Change{At: at, Value: value}
		select {
		case s.c <- ch:
		default:
			// The watcher has not taken the last one yet: the newest
			// replaces it.
			select {
			case <-s.c:
			default:
			}
			s.c <- ch
		}
	}
}

// Watch is Source's: the reads Provide named are watched.
func (f *Feed) Watch(ctx context.Context, read string) (<-chan Change, bool) {
	k, err := readKey(read)
	if err != nil {
		return nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.provided[k] {
		return nil, false
	}
	if f.subs == nil {
		f.subs = map[string]map[*feedSub]bool{}
	}
	if f.subs[k] == nil {
		f.subs[k] = map[*feedSub]bool{}
	}
	s := &feedSub{c: make(chan Change, 1)}
	f.subs[k][s] = true
	context.AfterFunc(ctx, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subs[k], s)
		close(s.c) // under the lock: Publish never sends on it again
	})
	return s.c, true
}

// readKey is a read written one way, so that a check written by a person
// and the read the daemon feeds are the same key.
func readKey(read string) (string, error) {
	cmd, err := grammar.Parse(read, grammar.ParseOptions{})
	if err != nil {
		return "", fmt.Errorf("the read %q: %w", read, err)
	}
	if len(cmd.Stages) != 1 || len(cmd.Stages[0].Calls) != 1 {
		return "", fmt.Errorf("the read %q is not one invocation", read)
	}
	inv := cmd.Stages[0].Calls[0]
	// The order of the parameters says nothing about what is read.
	params := slices.Clone(inv.Params)
	slices.SortStableFunc(params, func(a, b grammar.Param) int { return strings.Compare(a.Key, b.Key) })
	return tools.CommandText(inv.Tool(), params), nil
}
