package skills

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// MaxReadBytes bounds what skill/read returns: a small model's context is
// a few thousand tokens.
const MaxReadBytes = 32 << 10

// RegisterRead adds skill/read to reg: a skill's instructions (or one of its
// files, a reference) when the model decides it needs them. Nothing of a
// skill but its name and description is in the prompt before that (Index).
func RegisterRead(reg *tools.Registry, list []*Skill) error {
	if len(list) == 0 {
		return nil
	}
	return reg.Register(&readTool{list: list})
}

type readTool struct{ list []*Skill }

func (*readTool) ReadOnly() {}

func (t *readTool) Spec() grammar.ToolSpec {
	var names []string
	for _, s := range t.list {
		names = append(names, s.Name())
	}
	return grammar.ToolSpec{Name: "skill/read", Doc: "Read a skill's instructions (or, with file, one of its reference files) before following it.",
		Params: []grammar.ArgSpec{
			{Name: "name", Doc: "the skill", Type: grammar.TypeString, Required: true, Enum: names},
			{Name: "file", Doc: "a file of the skill, such as references/wiring.md (empty: the instructions)", Type: grammar.TypeString, MaxLen: MaxPathBytes},
		}}
}

func (t *readTool) Run(_ context.Context, args grammar.Args) (tools.Result, error) {
	name, file := args.String("name"), args.String("file")
	var s *Skill
	for _, c := range t.list {
		if c.Name() == name {
			s = c
		}
	}
	if s == nil {
		return tools.Result{}, fmt.Errorf("no skill %q", name)
	}
	if file == "" || file == SkillFile {
		return tools.Result{Text: cap32(Instructions(s))}, nil
	}
	f, ok := s.Tree.File(file)
	if !ok {
		return tools.Result{}, fmt.Errorf("skill %s has no file %q (its files: %s)", name, file, strings.Join(fileNames(s), ", "))
	}
	b, err := readSmall(filepath.Join(s.Dir, filepath.FromSlash(f.Path)), MaxFileBytes)
	if err != nil {
		return tools.Result{}, err
	}
	if err := diff(Tree{Files: []File{f}}, Tree{Files: []File{{Path: f.Path, Size: int64(len(b)), Exec: f.Exec, SHA256: sum(b)}}}); err != nil {
		return tools.Result{}, fmt.Errorf("skill %s: %w: %v", name, ErrTampered, err)
	}
	if !utf8.Valid(b) {
		return tools.Result{}, fmt.Errorf("skill %s: %s is not text", name, file)
	}
	return tools.Result{Text: cap32(string(b))}, nil
}

// Instructions is what skill/read returns for a skill: its instructions,
// then the files it may point to and the tools it brings.
func Instructions(s *Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Skill %s\n\n%s", s.Name(), strings.TrimRight(s.Instructions, "\n"))
	if files := fileNames(s); len(files) > 0 {
		fmt.Fprintf(&b, "\n\nFiles (read one with @skill/read{name=%q;file=\"...\"}): %s", s.Name(), strings.Join(files, ", "))
	}
	if len(s.Tools) > 0 {
		var names []string
		for _, d := range s.Tools {
			names = append(names, s.Name()+"/"+d.Name)
		}
		fmt.Fprintf(&b, "\n\nTools: %s", strings.Join(names, ", "))
	}
	return b.String()
}

func fileNames(s *Skill) []string {
	var out []string
	for _, f := range s.Tree.Files {
		if f.Path != SkillFile && f.Path != ToolsFile && !f.Exec {
			out = append(out, f.Path)
		}
	}
	return out
}

func cap32(s string) string {
	if len(s) <= MaxReadBytes {
		return s
	}
	cut := MaxReadBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "\n[... cut at 32 KiB]"
}
