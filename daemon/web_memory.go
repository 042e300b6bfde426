package daemon

// This file: what the dashboard's memory page reads of the workspace
// (channels/web's MemoryFacts): the entries a browser may read, the search
// memory/search ranks with (the same Workspace.SearchAs), and the persona.

import (
	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/tools"
)

type webMemory struct{ w *memory.Workspace }

func (f webMemory) Entries(c tools.Caller) ([]web.MemoryEntry, error) {
	es, err := f.w.ListAs(c)
	return webEntries(es), err
}

func (f webMemory) Search(c tools.Caller, query string, n int) ([]web.MemoryEntry, error) {
	es, err := f.w.SearchAs(c, query, n)
	return webEntries(es), err
}

func (f webMemory) Persona() (soul, user string, err error) {
	soul, user, _, err = f.w.Persona()
	return soul, user, err
}

func webEntries(es []memory.Entry) []web.MemoryEntry {
	out := make([]web.MemoryEntry, len(es))
	for i, e := range es {
		out[i] = web.MemoryEntry{ID: e.ID, Date: e.Date, Author: e.Author(), Shared: e.Shared != "", Tags: e.Tags, Text: e.Text}
	}
	return out
}
