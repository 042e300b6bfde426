package skills

// This file: checking, installing and removing skills as tools (skill/check,
// skill/install, skill/remove), so that the dashboard's buttons are calls on
// the one call path, decided by the one authorizer and audited like any
// other: installing or removing a skill changes what may act on the board,
// so both are tools.BoardOnly (a person at the board or an owner). They do
// what `clawedge skill install` and `clawedge skill rm` do, with the same
// functions: the verification (InstallArchive), the plan shown before the
// owner says yes (Plan.Describe), the removal (Remove).

import (
	"context"
	"errors"
	"fmt"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Manager is what the tools need of the board: where skills go, whom to
// trust, what no skill may touch, and the uploads they install from.
type Manager struct {
	Dir       string // data_dir/skills
	Trust     Trust
	Protected []string
	Uploads   Uploads
}

// RegisterManage adds skill/check, skill/install and skill/remove over m
// (nil: their specs only, for listing) to reg.
func RegisterManage(reg *tools.Registry, m *Manager) error {
	return reg.Register(checkTool{m}, installTool{m}, removeTool{m})
}

var errNoManager = errors.New("skills cannot be installed here: the daemon has no skills folder")

func uploadParam() grammar.ArgSpec {
	return grammar.ArgSpec{Name: "upload", Doc: "the upload's sha256 (64 hex digits), as the upload answered", Type: grammar.TypeString, Required: true, MaxLen: 64}
}

// plan verifies upload id as an install would, up to the owner's answer,
// and answers with decide: the one path of both tools.
func (m *Manager) plan(id string, decide func(Plan) Decision) (*Skill, Plan, error) {
	f, err := m.Uploads.Open(id)
	if err != nil {
		return nil, Plan{}, err
	}
	defer f.Close()
	var seen Plan
	s, err := InstallArchive(m.Dir, f, InstallOptions{Trust: m.Trust, Protected: m.Protected, Source: "upload sha256:" + id,
		Confirm: func(p Plan) (Decision, error) { seen = p; return decide(p), nil }})
	return s, seen, err
}

type checkTool struct{ m *Manager }

func (checkTool) ReadOnly() {} // it unpacks into a dot folder it removes; nothing installed

func (checkTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "skill/check", Doc: "Verify an uploaded skill archive as skill/install would and say what it declares (its signer, tools and their rights); nothing is installed.",
		Params: []grammar.ArgSpec{uploadParam()}}
}

func (t checkTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	if t.m == nil {
		return tools.Result{}, errNoManager
	}
	_, p, err := t.m.plan(a.String("upload"), func(Plan) Decision { return Decision{} })
	if !errors.Is(err, ErrDeclined) {
		if err == nil { // cannot be: nothing confirmed
			err = errors.New("check: installed without an answer")
		}
		return tools.Result{}, err
	}
	signed := p.SignedBy
	if signed == "" {
		signed = "nobody trusted (unsigned)"
	}
	return tools.Result{Text: p.Describe(),
		Fields: map[string]grammar.Value{"name": grammar.StringValue(p.Skill.Name()), "signed_by": grammar.StringValue(p.SignedBy),
			"tools": grammar.IntValue(int64(len(p.Skill.Tools)))},
		Audit: fmt.Sprintf("skill %s, signed by %s, %d tool(s)", p.Skill.Name(), signed, len(p.Skill.Tools))}, nil
}

type installTool struct{ m *Manager }

func (installTool) BoardOnly() {}

func (installTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "skill/install", Doc: "Install an uploaded skill archive after its owner read what skill/check said it declares (only a person at the board or an owner); a running daemon loads it at its next start.",
		Params: []grammar.ArgSpec{uploadParam(),
			{Name: "grant", Doc: "allow its tools now, without a policy rule naming them", Type: grammar.TypeBoolean, Default: false}}}
}

func (t installTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	if t.m == nil {
		return tools.Result{}, errNoManager
	}
	id, grant := a.String("upload"), a.Bool("grant")
	s, _, err := t.m.plan(id, func(Plan) Decision { return Decision{Install: true, Grant: grant} })
	if err != nil {
		return tools.Result{}, err
	}
	t.m.Uploads.Discard(id)
	text := fmt.Sprintf("installed %s in %s", s.Name(), s.Dir)
	switch {
	case len(s.Tools) == 0:
	case s.Granted:
		text += "; its tools are allowed (granted at install)"
	default:
		text += fmt.Sprintf("; its tools are denied until a rule names them, such as policy.tools %q: allow", s.Name()+"/*")
	}
	return tools.Result{Text: text + "; a running daemon loads it at its next start",
		Fields: map[string]grammar.Value{"name": grammar.StringValue(s.Name()), "signed_by": grammar.StringValue(s.SignedBy), "granted": grammar.BoolValue(s.Granted)}}, nil
}

type removeTool struct{ m *Manager }

func (removeTool) BoardOnly() {}

func (removeTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "skill/remove", Doc: "Remove an installed skill (only a person at the board or an owner); a running daemon drops it at its next start.",
		Params: []grammar.ArgSpec{{Name: "name", Doc: "the skill", Type: grammar.TypeString, Required: true, MaxLen: 64}}}
}

func (t removeTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	if t.m == nil {
		return tools.Result{}, errNoManager
	}
	if err := Remove(t.m.Dir, a.String("name")); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: fmt.Sprintf("removed %s; a running daemon drops it at its next start", a.String("name"))}, nil
}
