package memory

// This file: whose an entry is, and who may read and forget it. An entry is
// its author principal's (Entry.User: whoever saved it, or the person the
// model saved it for), or the board's (Entry.Board). A caller reads its own
// entries and the shared ones. Who may forget one is the authorizer's to
// decide (memory/forget is a tools.Owned): its author, an owner, a person at
// the board.

import (
	"slices"

	"github.com/clawedge/clawedge/tools"
)

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

// possessive is "telegram:42's", "the board's".
func possessive(owner string) string { return owner + "'s" }
