package web

// This file: pairing and revoking browsers as tools (web/pair, web/revoke,
// web/devices), so that who may is decided by the one authorizer and each
// act is audited: from a console's /web, Telegram's /web, or `clawedge web
// pair` (a call through the control socket). The code itself is the asking
// person's: the audit keeps only that one was issued.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// ErrNoDashboard is a pairing tool called where the dashboard is off.
var ErrNoDashboard = errors.New("the dashboard is off: the config has no web: section")

// RegisterTools adds web/pair, web/revoke and web/devices over s (nil: their
// specs only, for listing) to reg.
func RegisterTools(reg *tools.Registry, s *Sessions) error {
	return reg.Register(pairTool{s}, revokeTool{s}, devicesTool{s})
}

type pairTool struct{ s *Sessions }

func (pairTool) BoardOnly() {}

func (pairTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "web/pair", Doc: "Issue a one-time code that pairs a browser with the dashboard as web:NAME (only a person at the board or an owner).", Params: []grammar.ArgSpec{
		{Name: "name", Doc: "the browser's name (lower case letters, digits, - and _)", Type: grammar.TypeString, Default: "browser", MaxLen: nameMax},
		{Name: "role", Doc: "what it may do", Type: grammar.TypeString, Enum: []string{string(Viewer), string(Operator), string(Owner)}, Default: string(Operator)},
		{Name: "minutes", Doc: "how long the code is valid (over 5, it survives a restart: the SD image's first code, on its boot partition)", Type: grammar.TypeInteger,
			Min: tools.Float(1), Max: tools.Float(MaxCodeTTL.Minutes()), Default: int(CodeTTL.Minutes())},
	}}
}

func (t pairTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	if t.s == nil {
		return tools.Result{}, ErrNoDashboard
	}
	name, role := a.String("name"), Role(a.String("role"))
	code, exp, err := t.s.PairFor(name, role, time.Duration(a.Int("minutes"))*time.Minute)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{
		Text: PairLine(code, exp, t.s.PausedUntil(), name, role),
		Fields: map[string]grammar.Value{"code": grammar.StringValue(code), "expires": grammar.StringValue(exp.UTC().Format(time.RFC3339)),
			"name": grammar.StringValue(name), "role": grammar.StringValue(string(role))},
		Audit: fmt.Sprintf("a code for web:%s (%s), valid until %s", name, role, exp.UTC().Format(time.RFC3339)),
	}, nil
}

// PairLine is what a person issuing a code is told.
func PairLine(code string, expires, paused time.Time, name string, role Role) string {
	line := fmt.Sprintf("code %s: type it on the dashboard's pairing page within %s; the browser will act as web:%s (%s)",
		code, time.Until(expires).Round(time.Minute), name, role)
	if !paused.IsZero() {
		line += fmt.Sprintf("\nnote: wrong codes were tried from the network; no code is taken before %s", paused.Local().Format("15:04:05"))
	}
	return line
}

type revokeTool struct{ s *Sessions }

func (revokeTool) BoardOnly() {}

func (revokeTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "web/revoke", Doc: "Unpair the browser web:NAME: its sessions end at once (only a person at the board or an owner).", Params: []grammar.ArgSpec{
		{Name: "name", Doc: "the browser's name", Type: grammar.TypeString, Required: true, MaxLen: nameMax},
	}}
}

func (t revokeTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	if t.s == nil {
		return tools.Result{}, ErrNoDashboard
	}
	n, err := t.s.Revoke(a.String("name"))
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: fmt.Sprintf("revoked web:%s (%d session(s))", a.String("name"), n),
		Fields: map[string]grammar.Value{"revoked": grammar.IntValue(int64(n))}}, nil
}

type devicesTool struct{ s *Sessions }

func (devicesTool) ReadOnly() {}

func (devicesTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "web/devices", Doc: "List the browsers paired with the dashboard: name, role, when paired and last used."}
}

func (t devicesTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	if t.s == nil {
		return tools.Result{}, ErrNoDashboard
	}
	ds := t.s.List()
	if len(ds) == 0 {
		return tools.Result{Text: "no browser is paired (web/pair issues a code)", Fields: map[string]grammar.Value{"devices": grammar.IntValue(0)}}, nil
	}
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "web:%s %s, paired %s, last used %s\n", d.Name, d.Role, d.Paired.Local().Format(time.DateTime), d.LastUsed.Local().Format(time.DateTime))
	}
	return tools.Result{Text: strings.TrimRight(b.String(), "\n"), Fields: map[string]grammar.Value{"devices": grammar.IntValue(int64(len(ds)))}}, nil
}
