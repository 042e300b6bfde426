package tools

import (
	"errors"
	"sync/atomic"
)

// Late holds what a family of tools acts on when it exists only after the
// tools are registered (the automations' scheduler, the goals' runtime: each
// checks lines against the registry the tools are in, so it comes second).
// Until Set, Get says why nothing can be done: a CLI process that registers
// the tools to list or check them never runs the daemon's part.
type Late[T any] struct{ p atomic.Pointer[T] }

// Set makes the tools act on v.
func (l *Late[T]) Set(v *T) { l.p.Store(v) }

// Get returns what was Set, or an error saying missing.
func (l *Late[T]) Get(missing string) (*T, error) {
	if v := l.p.Load(); v != nil {
		return v, nil
	}
	return nil, errors.New(missing)
}
