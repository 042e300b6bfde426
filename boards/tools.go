package boards

// This file: pairing, unpairing and listing boards as tools (board/pair,
// board/add, board/rm, board/list), so that who may is decided by the one
// authorizer and each act is audited: from a console's /board, or
// `clawedge board pair|add|rm|list` (calls through the control socket).
// The three that change who may act on this board are tools.BoardOnly: a
// person at the board or an owner. A code is the asking person's alone:
// the audit keeps only that one was issued.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Tools is what the board/* tools act on once the daemon runs.
type Tools = tools.Late[Service]

const noBoards = "boards are off: the config has no boards: section"

// RegisterTools adds board/pair, board/add, board/rm and board/list over
// late to reg.
func RegisterTools(reg *tools.Registry, late *Tools) error {
	return reg.Register(pairTool{late}, addTool{late}, rmTool{late}, listTool{late})
}

type pairTool struct{ l *Tools }

func (pairTool) BoardOnly() {}

func (pairTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "board/pair", Doc: "Issue a one-time code that pairs another board with this one (`clawedge board add NAME --code CODE` there; only a person at the board or an owner)."}
}

func (t pairTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	s, err := t.l.Get(noBoards)
	if err != nil {
		return tools.Result{}, err
	}
	if s.Listen == "" {
		return tools.Result{}, fmt.Errorf("this board serves no A2A (boards.listen is empty): another board cannot pair with it")
	}
	code, exp, err := s.peers.Code()
	if err != nil {
		return tools.Result{}, err
	}
	line := fmt.Sprintf("code %s: on the other board, within %s: clawedge board add NAME --code %s --url %s",
		code, time.Until(exp).Round(time.Minute), code, s.CardURL())
	if paused := s.peers.PausedUntil(); !paused.IsZero() {
		line += fmt.Sprintf("\nnote: wrong codes were tried from the network; no code is taken before %s", paused.Local().Format("15:04:05"))
	}
	return tools.Result{Text: line,
		Fields: map[string]grammar.Value{"code": grammar.StringValue(code), "expires": grammar.StringValue(exp.UTC().Format(time.RFC3339)),
			"url": grammar.StringValue(s.CardURL()), "pin": grammar.StringValue(s.id.Pin)},
		Audit: "a board pairing code, valid until " + exp.UTC().Format(time.RFC3339)}, nil
}

type addTool struct{ l *Tools }

func (addTool) BoardOnly() {}

func (addTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "board/add", Doc: "Pair with another board by the code it showed (board/pair there); its tools become NAME.ns/tool here (only a person at the board or an owner).", Params: []grammar.ArgSpec{
		{Name: "name", Doc: "what this board calls it (its tools' prefix)", Type: grammar.TypeString, Required: true, MaxLen: 32},
		{Name: "code", Doc: "the code it showed", Type: grammar.TypeString, Required: true, MaxLen: 16},
		{Name: "url", Doc: "its A2A address, https://host:port (as board/pair showed it); none: the board of that name found on the LAN", Type: grammar.TypeString, MaxLen: 256},
	}}
}

// AuditCommand keeps the code out of the audit trail: for its few minutes
// it pairs a board with the other.
func (addTool) AuditCommand(a grammar.Args) string {
	params := []grammar.Param{{Key: "name", Value: grammar.StringValue(a.String("name"))}, {Key: "code", Value: grammar.StringValue("(not kept)")}}
	if a.Has("url") {
		params = append(params, grammar.Param{Key: "url", Value: grammar.StringValue(a.String("url"))})
	}
	return tools.CommandText("board/add", params)
}

func (t addTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	s, err := t.l.Get(noBoards)
	if err != nil {
		return tools.Result{}, err
	}
	p, err := s.Pair(ctx, a.String("name"), a.String("url"), a.String("code"))
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: fmt.Sprintf("paired with %s at %s (certificate %s…); its tools are %s.ns/tool, denied here unless a rule names them (policy.tools %q: allow)",
		p.Name, p.URL, p.Pin[:16], p.Name, p.Name+".*"),
		Fields: map[string]grammar.Value{"name": grammar.StringValue(p.Name), "pin": grammar.StringValue(p.Pin)}}, nil
}

type rmTool struct{ l *Tools }

func (rmTool) BoardOnly() {}

func (rmTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "board/rm", Doc: "Unpair the board NAME: here at once, there too when it answers (only a person at the board or an owner).", Params: []grammar.ArgSpec{
		{Name: "name", Doc: "the board's name here", Type: grammar.TypeString, Required: true, MaxLen: 32},
	}}
}

func (t rmTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	s, err := t.l.Get(noBoards)
	if err != nil {
		return tools.Result{}, err
	}
	told, err := s.Unpair(ctx, a.String("name"))
	if err != nil {
		return tools.Result{}, err
	}
	text := "unpaired " + a.String("name") + " here and there"
	if !told {
		text = "unpaired " + a.String("name") + " here; it did not answer, so it still lists this board, but every request of it is refused"
	}
	return tools.Result{Text: text, Fields: map[string]grammar.Value{"told": grammar.BoolValue(told)}}, nil
}

type listTool struct{ l *Tools }

func (listTool) ReadOnly() {}

func (listTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "board/list", Doc: "List the paired boards (name, address, state, last seen, tools) and the ones found on the LAN."}
}

func (t listTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	s, err := t.l.Get(noBoards)
	if err != nil {
		return tools.Result{}, err
	}
	var b strings.Builder
	list := s.List()
	for _, st := range list {
		seen := "never"
		if !st.LastSeen.IsZero() {
			seen = st.LastSeen.Local().Format(time.DateTime)
		}
		fmt.Fprintf(&b, "%s %s %s, last seen %s, %d tool(s)", st.Name, st.URL, st.State, seen, st.Tools)
		if st.Error != "" {
			fmt.Fprintf(&b, " (%s)", st.Error)
		}
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		b.WriteString("no board is paired (board/pair on the other board issues a code)")
	}
	return tools.Result{Text: strings.TrimRight(b.String(), "\n"), Fields: map[string]grammar.Value{"boards": grammar.IntValue(int64(len(list)))}}, nil
}
