package memory

// This file: the memory tools. They run on the one call path (tools.Runner.Call)
// like every tool, so the policy decides who may save, search and forget; the
// model's saves and forgets ask a person unless a rule names them
// (policy.Risky). What the model may save is only what it calls memory/save
// with: a tool result's text is never saved by itself.

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Register adds memory/save, memory/search, memory/forget and
// memory/persona on w to reg.
func Register(reg *tools.Registry, w *Workspace) error {
	return reg.Register(saveTool{w}, searchTool{w}, forgetTool{w}, personaTool{w})
}

// MaxResults bounds memory/search's n.
const MaxResults = 20

type saveTool struct{ w *Workspace }

func (t saveTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "memory/save", Doc: "Remember a fact for later conversations (one short sentence).", Params: []grammar.ArgSpec{
		{Name: "text", Doc: "the fact, in a sentence", Type: grammar.TypeString, Required: true, MaxLen: DefaultMaxTextBytes},
		{Name: "tags", Doc: "comma-separated words to file it under", Type: grammar.TypeString, MaxLen: 200},
	}}
}

func (t saveTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return t.RunFor(ctx, tools.Caller{}, "", a)
}

// RunFor records who saved: the principal and door, and from what (a person's
// own words, the model's save for a person, a program's).
func (t saveTool) RunFor(ctx context.Context, c tools.Caller, approval string, a grammar.Args) (tools.Result, error) {
	e := Entry{Text: a.String("text"), User: c.User, Channel: c.Channel, Source: sourceFor(c)}
	if tags := a.String("tags"); tags != "" {
		e.Tags = strings.Split(tags, ",")
	}
	saved, err := t.w.Save(e)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: "remembered " + saved.String(), Fields: map[string]grammar.Value{"id": grammar.IntValue(int64(saved.ID))}}, nil
}

// sourceFor is the source of an entry saved by a call of c: a program's when
// the model answers an automation or a goal (c.Creator is set), which acts for
// nobody present.
func sourceFor(c tools.Caller) Source {
	if c.Creator != nil {
		return Program
	}
	return SourceOf(c.Actor)
}

// SourceOf is the source of an entry saved by a call of actor.
func SourceOf(a tools.Actor) Source {
	switch a {
	case tools.Person:
		return Person
	case tools.Model:
		return Model
	}
	return Program
}

type searchTool struct{ w *Workspace }

func (searchTool) ReadOnly() {}

func (t searchTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "memory/search", Doc: "Find remembered facts (ids, dates, who saved them); an empty query lists the newest.", Params: []grammar.ArgSpec{
		{Name: "query", Doc: "words to look for", Type: grammar.TypeString, MaxLen: 500},
		{Name: "n", Doc: "how many entries", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(MaxResults), Default: 5},
	}}
}

func (t searchTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return t.RunFor(ctx, tools.Caller{}, "", a)
}

// RunFor finds the caller's own entries and the shared ones, not the others'.
func (t searchTool) RunFor(ctx context.Context, c tools.Caller, approval string, a grammar.Args) (tools.Result, error) {
	n := int(a.Int("n"))
	if !a.Has("n") {
		n = 5
	}
	es, err := t.w.SearchAs(c, a.String("query"), n)
	if err != nil {
		return tools.Result{}, err
	}
	if len(es) == 0 {
		return tools.Result{Text: "nothing remembered matches", Fields: map[string]grammar.Value{"entries": grammar.IntValue(0)}}, nil
	}
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.String()
	}
	return tools.Result{Text: strings.Join(lines, "\n"), Fields: map[string]grammar.Value{"entries": grammar.IntValue(int64(len(es)))}}, nil
}

type forgetTool struct{ w *Workspace }

func (t forgetTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "memory/forget", Doc: "Forget a remembered fact by its id (memory/search shows ids).", Params: []grammar.ArgSpec{
		{Name: "id", Doc: "the entry's id", Type: grammar.TypeInteger, Required: true, Min: tools.Float(1), Max: tools.Float(1 << 30)},
	}}
}

// Run forgets the entry. Who may is the authorizer's to decide, before the
// call runs (OwnerOf): its author, an owner, or a person at the board.
func (t forgetTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	e, err := t.w.Forget(int(a.Int("id")))
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: fmt.Sprintf("forgot %s", e.String()), Fields: map[string]grammar.Value{"id": grammar.IntValue(int64(e.ID))}}, nil
}

// OwnerOf is whose the entry args name is, for the authorizer (tools.Owned):
// its author principal, or nobody's for the board's entries, which only an
// owner or a person at the board may forget. An id that names no entry is
// nobody's: the call then fails with ErrNoEntry.
func (t forgetTool) OwnerOf(a grammar.Args) (tools.Principal, bool) {
	e, ok := t.w.entry(int(a.Int("id")))
	if !ok {
		return tools.Principal{}, false
	}
	if e.Board() {
		return tools.Principal{}, true
	}
	return tools.Principal{Channel: e.Channel, User: e.User}, true
}

// personaTool is memory/persona: writing SOUL.md or USER.md, which every
// turn's prompt starts with.
type personaTool struct{ w *Workspace }

// BoardOnly: the persona is the start of every turn's prompt, for everyone
// the board answers: only a person at the board or an owner (policy.owners;
// a browser paired as an owner and named there) may rewrite it, in person,
// never the model, a program or an automation, whatever the rules say.
func (personaTool) BoardOnly() {}

func (personaTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "memory/persona", Doc: "Replace SOUL.md (the assistant's persona) or USER.md (what it knows of its people), written atomically (only a person at the board or an owner).", Params: []grammar.ArgSpec{
		{Name: "file", Doc: "soul (SOUL.md) or user (USER.md)", Type: grammar.TypeString, Required: true, Enum: []string{"soul", "user"}},
		{Name: "text", Doc: "the whole new file (Markdown)", Type: grammar.TypeString, Required: true, MaxLen: DefaultMaxPersonaBytes},
	}}
}

func (t personaTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	n, err := t.w.WritePersona(a.String("file"), a.String("text"))
	if err != nil {
		return tools.Result{}, err
	}
	file, _ := PersonaFile(a.String("file"))
	return tools.Result{Text: fmt.Sprintf("wrote %s (%d bytes)", file, n), Fields: map[string]grammar.Value{"bytes": grammar.IntValue(int64(n))},
		// The outcome in the audit is which file and how long.
		Audit: fmt.Sprintf("%s written, %d bytes", file, n)}, nil
}
