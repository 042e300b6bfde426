// Package memory is the assistant's workspace: the persona (SOUL.md), what it
// knows about its people (USER.md) and its long-term memory (MEMORY.md), plain
// Markdown a person can read and edit. MEMORY.md is canonical: the search index
// (BM25 over stemmed words, in memory) is derived from it and rebuilt whenever
// the file changes, whoever changed it. The memory tools (memory/save,
// memory/search, memory/forget) run on the one call path like every tool, so
// the policy decides who may save, read and forget; every entry records who
// wrote it and from what, and is shown to a model as quoted data, never as an
// instruction.
package memory

import (
	"fmt"
	"strings"
	"time"
)

// Source is what an entry came from.
type Source string

const (
	// Person: a person's own words (/remember, memory save typed by a person).
	Person Source = "person"
	// Model: the model saved it, acting for a person.
	Model Source = "model"
	// Program: a program saved it (an MCP host, Home Assistant).
	Program Source = "program"
	// Summary: a session's summary, saved when the session was compacted.
	Summary Source = "summary"
	// File: written by hand into MEMORY.md.
	File Source = "file"
)

func knownSource(s string) bool {
	switch Source(s) {
	case Person, Model, Program, Summary, File:
		return true
	}
	return false
}

// Entry is one memory.
type Entry struct {
	ID   int
	Date time.Time // the day it was saved (UTC)
	// Source, and who wrote it: the principal's id ("telegram:42") on its
	// channel ("telegram"); empty for an entry written into the file by hand.
	Source  Source
	User    string
	Channel string
	Tags    []string
	Text    string
	// Section is the Markdown heading the entry is under ("## Garage"), part
	// of what search matches.
	Section string
}

// Author says who wrote e, for people and for the model's quoted view:
// "person telegram:42", "model for telegram:42", "file".
func (e Entry) Author() string {
	switch {
	case e.User == "":
		return string(e.Source)
	case e.Source == Model:
		return "model for " + e.User
	}
	return string(e.Source) + " " + e.User
}

// String is the entry on one line: "#12 2026-11-20 (person telegram:42) text [tags]".
func (e Entry) String() string {
	s := fmt.Sprintf("#%d %s (%s) %s", e.ID, e.Date.Format(time.DateOnly), e.Author(), oneLine(e.Text))
	if len(e.Tags) > 0 {
		s += " [" + strings.Join(e.Tags, ", ") + "]"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
