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
	"unicode/utf8"

	"github.com/clawedge/clawedge/tools"
)

// Source is what an entry came from.
type Source string

const (
	// Person: a person's own words (/remember, memory save typed by a person).
	Person Source = "person"
	// Model: the model saved it, acting for a person.
	Model Source = "model"
	// Program: a program saved it (an MCP host, Home Assistant, an
	// automation or a goal, or the model answering one of those).
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
	// Shared, when not empty, is who shared the entry with everyone who may
	// search memory ("uid:1000"; "file" for a bare "shared" mark written by
	// hand). An entry not shared is read only by its owner (Owner).
	Shared string
}

// Board reports whether e is the board's: written by hand without an author,
// or saved by a person at the board (a console, the control socket, the CLI:
// tools.LocalChannel), who may read and edit the file anyway. Every owner
// (policy.owners, a person at the board) reads and forgets it as their own.
func (e Entry) Board() bool { return e.User == "" || tools.LocalChannel(e.Channel) }

// Owner names whose entry e is: its author principal ("telegram:42",
// "mcp:claude"), or "the board" (Board).
func (e Entry) Owner() string {
	if e.Board() {
		return "the board"
	}
	return e.User
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

// String is the entry on one line: "#12 2026-11-20 (person telegram:42) text
// [tags]", "(program mcp:claude, shared)" when it is shared.
func (e Entry) String() string {
	who := e.Author()
	if e.Shared != "" {
		who += ", shared"
	}
	s := fmt.Sprintf("#%d %s (%s) %s", e.ID, e.Date.Format(time.DateOnly), who, oneLine(e.Text))
	if len(e.Tags) > 0 {
		s += " [" + strings.Join(e.Tags, ", ") + "]"
	}
	return s
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// escapeControls writes the control characters of s as visible escapes, so
// that an entry never carries a terminal's or a model's control bytes: C0
// ("\x1b", "\a"), DEL ("\x7f"), C1 ("\u009b") and bytes that are not
// UTF-8 ("\xff"). A newline is kept (it joins an entry's lines as read from
// the file) and a tab is a space. What it writes has nothing left to escape, so
// escaping twice is escaping once; the escapes are the entry's text from then
// on, never turned back into the bytes.
func escapeControls(s string) string {
	if !hasControl(s, '\n') {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r == '\n':
			b.WriteByte('\n')
		case r == '\t':
			b.WriteByte(' ')
		case r == '\a':
			b.WriteString(`\a`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\v':
			b.WriteString(`\v`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isControl: C0, DEL, C1.
func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f)
}

// hasControl reports whether s holds a control character but keep, or bytes
// that are not UTF-8.
func hasControl(s string, keep rune) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r != keep && isControl(r) {
			return true
		}
	}
	return false
}
