package skills

import (
	"fmt"
	"slices"
)

// SkillFile is the standard file every skill folder has.
const SkillFile = "SKILL.md"

// Reserved are names a skill may not take: its name is the namespace of its
// tools, and a skill called "gpio" would be covered by every rule about the
// board's own gpio tools.
var Reserved = []string{"gpio", "serial", "i2c", "sys", "auto", "skill", "mcp", "mqtt", "clawedge"}

// Skill is one read and checked skill folder.
type Skill struct {
	Meta         Meta
	Instructions string     // SKILL.md after the front matter
	Tools        []ToolDecl // from tools.yaml; none for an instruction-only skill
	Dir          string     // the folder, absolute once installed
	Tree         Tree       // every file, as signed or installed
	SignedBy     string     // the trusted key that signed it; "" when unsigned
	Granted      bool       // the owner allowed its tools at install (record.go)
	// Launches are how each tool's program starts on this board (by tool
	// name), as found at install for the plan; a run reads it again.
	Launches map[string]Launch
}

// dropData keeps nothing of the files' contents: the tree stays a list of hashes.
func (s *Skill) dropData() {
	for i := range s.Tree.Files {
		s.Tree.Files[i].data = nil
	}
}

// Name is the skill's name, the namespace of its tools.
func (s *Skill) Name() string { return s.Meta.Name }

// keepDefs keeps the two files a skill is defined by.
func keepDefs(p string) bool { return p == SkillFile || p == ToolsFile }

// parseTree reads the skill a tree defines. folder, when not "", is the
// folder's name, which the format says the skill's name must be.
func parseTree(t Tree, folder string) (*Skill, error) {
	md, ok := t.File(SkillFile)
	if !ok {
		return nil, fmt.Errorf("no %s", SkillFile)
	}
	meta, body, err := ParseSkillMD(md.data)
	if err != nil {
		return nil, err
	}
	if folder != "" && folder != meta.Name {
		return nil, fmt.Errorf("%s names the skill %q but its folder is %q: the format wants them equal", SkillFile, meta.Name, folder)
	}
	if slices.Contains(Reserved, meta.Name) {
		return nil, fmt.Errorf("the name %q is reserved for clawedge's own tools", meta.Name)
	}
	s := &Skill{Meta: meta, Instructions: body, Tree: t}
	if tf, ok := t.File(ToolsFile); ok {
		if s.Tools, err = ParseTools(meta.Name, tf.data); err != nil {
			return nil, err
		}
	}
	for _, d := range s.Tools {
		f, ok := t.File(d.Run[0])
		if !ok || !f.Exec {
			return nil, fmt.Errorf("%s: tool %s runs %s, which is not an executable file of the skill", ToolsFile, d.Name, d.Run[0])
		}
	}
	return s, nil
}
