package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a configuration file, at the line and
// column (1-based, counted in characters) of the offending key or value.
type Problem struct {
	File   string
	Line   int
	Column int
	Msg    string
}

// String formats the problem the way compilers do ("file:line:col: msg"),
// which editors and terminals turn into links.
func (p Problem) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d: %s", p.Line, p.Column, p.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.File, p.Line, p.Column, p.Msg)
}

// Error is every problem found in one configuration file. All of them are
// reported at once, not just the first, so that fixing a file on a board
// over a slow serial console takes one round trip rather than ten.
type Error struct {
	List []Problem
}

// Error lists the problems sorted by position, one per line.
func (e *Error) Error() string {
	var b strings.Builder
	for i, p := range e.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// problems collects Problems while a file is decoded and validated.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) add(at pos, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: at.line, Column: at.col, Msg: fmt.Sprintf(format, args...)})
}

// err returns nil or an *Error with the problems sorted by position and
// with every occurrence of a secret value scrubbed. Messages are built
// from the file as written, never from expanded values, so scrubbing is a
// second line of defence: it catches a token pasted literally into a
// non-secret field such as api_url.
func (ps *problems) err(secrets []string) error {
	if len(ps.list) == 0 {
		return nil
	}
	list := slices.Clone(ps.list)
	for i := range list {
		list[i].Msg = scrub(list[i].Msg, secrets)
	}
	slices.SortStableFunc(list, func(a, b Problem) int {
		if c := cmp.Compare(a.Line, b.Line); c != 0 {
			return c
		}
		return cmp.Compare(a.Column, b.Column)
	})
	// The same problem can be found twice when an alias makes one node
	// appear in two places; report it once.
	list = slices.Compact(list)
	return &Error{List: list}
}

// pos is a 1-based line and column in a configuration file.
type pos struct {
	line, col int
}
