package memory

// This file: whose an entry is, and who may read and forget it. An entry is
// its author principal's (Entry.User: whoever saved it, or the person the
// model saved it for), or the board's (Entry.Board). A caller reads its own
// entries and the shared ones; it forgets its own, and an owner any.

import (
	"errors"
	"slices"

	"github.com/clawedge/clawedge/tools"
)

// ErrNotYours is forgetting an entry that is somebody else's.
var ErrNotYours = errors.New("only its author or an owner (policy.owners, a person at the board) may forget it")

// SetOwners names the principal ids that are owners (policy.owners): they read
// and forget the board's entries as their own, and forget anyone's. A person
// at the board (tools.LocalChannel) is an owner whatever the list says.
func (w *Workspace) SetOwners(ids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.owners = nil
	for _, id := range ids {
		w.owners = append(w.owners, tools.UserID(id))
	}
}

// reader is who asks the memory, as the door established it.
type reader struct {
	id    string // the principal's stable id (tools.UserID)
	owner bool
}

// readerOf is c as a reader of w. An owner is a person, or the model acting
// for one, at the board or named by policy.owners; never a program, an
// automation or a goal, nor the model answering one of those.
func (w *Workspace) readerOf(c tools.Caller) reader {
	r := reader{id: tools.UserID(c.User)}
	person := (c.Actor == tools.Person || c.Actor == tools.Model) && c.Creator == nil
	if person && r.id != "" {
		w.mu.Lock()
		r.owner = tools.LocalChannel(c.Channel) || slices.Contains(w.owners, r.id)
		w.mu.Unlock()
	}
	return r
}

// own reports whether e is r's: r saved it (or the model for r), or it is the
// board's and r an owner.
func (r reader) own(e *Entry) bool {
	if e.Board() {
		return r.owner
	}
	return r.id != "" && e.User == r.id
}

// reads reports whether r finds e: its own, or shared.
func (r reader) reads(e *Entry) bool { return r.own(e) || e.Shared != "" }

// recalls reports whether e is put into r's turn: what r reads, but a
// program's entry only into that program's own turns, never into a person's
// (memory/search still finds it, labelled).
func (r reader) recalls(e *Entry) bool {
	if e.Source == Program && (e.Board() || e.User != r.id) {
		return false
	}
	return r.reads(e)
}

// mayForget reports whether r may forget e: its author, or an owner.
func (r reader) mayForget(e *Entry) bool { return r.owner || r.own(e) }

// possessive is "telegram:42's", "the board's".
func possessive(owner string) string { return owner + "'s" }
