package daemon

// This file: what the dashboard's skills page reads (web.SkillFacts): the
// skills installed in data_dir/skills as `clawedge skill list` sees them
// (loaded from the folder at each read, so an install shows at once, though
// the running daemon loads it at its next start), and where an upload waits
// for skill/check and skill/install (skills.Uploads).

import (
	"io"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/skills"
)

type webSkills struct{ a *Core }

func (k webSkills) Skills() ([]web.SkillInfo, []string) {
	list, errs := InstalledSkills(k.a.cfg)
	out := make([]web.SkillInfo, 0, len(list))
	for _, s := range list {
		out = append(out, web.SkillInfo{Name: s.Name(), Description: s.Meta.Description, SignedBy: s.SignedBy, Tools: len(s.Tools), Granted: s.Granted,
			Declares: skills.Plan{Skill: s, SignedBy: s.SignedBy, Source: s.Dir}.Describe()})
	}
	var refused []string
	for _, e := range errs {
		refused = append(refused, e.Error())
	}
	return out, refused
}

func (k webSkills) Stage(r io.Reader) (string, error) { return k.uploads().Stage(r) }
func (k webSkills) Discard(id string)                 { k.uploads().Discard(id) }

func (k webSkills) uploads() skills.Uploads { return skills.Uploads{Dir: SkillsDir(k.a.cfg)} }

// registerManage adds skill/check, skill/install and skill/remove over
// data_dir/skills, with skills.trust and the protected paths: the same
// verification as `clawedge skill install`.
func (a *Core) registerManage() error {
	t, err := SkillTrust(a.cfg)
	if err != nil { // said by loadSkills already; the tools say it again when called
		return skills.RegisterManage(a.reg, nil)
	}
	dir := SkillsDir(a.cfg)
	return skills.RegisterManage(a.reg, &skills.Manager{Dir: dir, Trust: t, Protected: ProtectedPaths(a.cfg), Uploads: skills.Uploads{Dir: dir}})
}
