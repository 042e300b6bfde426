package daemon

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/update"
)

// SkillsDir is where skills are installed: data_dir/skills.
func SkillsDir(cfg *config.Config) string { return filepath.Join(cfg.DataDir, "skills") }

// SkillTrust is the config's skills.trust and skills.allow_unsigned.
func SkillTrust(cfg *config.Config) (skills.Trust, error) {
	t := skills.Trust{AllowUnsigned: cfg.Skills.AllowUnsigned}
	for i, k := range cfg.Skills.Trust {
		pub, err := update.ParseKey(k)
		if err != nil {
			return t, fmt.Errorf("skills.trust[%d]: %w", i, err)
		}
		t.Keys = append(t.Keys, pub)
	}
	return t, nil
}

// ProtectedPaths are what no skill's tool may read or write: data_dir (the
// store, the device key, the skills) and the config file's folder (the
// config and clawedge.env beside it).
func ProtectedPaths(cfg *config.Config) []string {
	p := []string{cfg.DataDir}
	if cfg.Source != "" {
		p = append(p, filepath.Dir(cfg.Source))
	}
	return p
}

// loadSkills loads the installed skills once (InstalledSkills), and logs
// why the others were left out.
func (a *Core) loadSkills() []*skills.Skill {
	if a.skillsLoaded {
		return a.skillList
	}
	a.skillsLoaded = true
	a.skillList, a.skillErrs = InstalledSkills(a.cfg)
	for _, err := range a.skillErrs {
		a.warn("skill not loaded: " + err.Error())
	}
	return a.skillList
}

// InstalledSkills loads the installed skills of cfg: those that fail to
// load (a file changed since install, a key no longer trusted, a path it
// may not be granted, a name taken by an MCP server) are left out, each
// with why, for the log and doctor.
func InstalledSkills(cfg *config.Config) ([]*skills.Skill, []error) {
	t, err := SkillTrust(cfg)
	if err != nil {
		return nil, []error{err}
	}
	skills.Sweep(SkillsDir(cfg), time.Now())
	list, errs := skills.LoadAll(SkillsDir(cfg), t)
	var out []*skills.Skill
	for _, s := range list {
		if err := skills.CheckProtected(s, ProtectedPaths(cfg)); err != nil {
			errs = append(errs, err)
			continue
		}
		if cfg.MCP != nil {
			if _, taken := cfg.MCP.Servers[s.Name()]; taken {
				errs = append(errs, fmt.Errorf("skill %s: the name is an MCP server's (mcp.servers.%s): its tools would share a namespace", s.Name(), s.Name()))
				continue
			}
		}
		out = append(out, s)
	}
	return out, errs
}

// registerSkills adds skill/read and every loaded skill's script tools. The
// tools run in the sandbox whatever exec.mode says, with the rights each
// declares and exec.limits' rlimits.
func (a *Core) registerSkills() error {
	list := a.loadSkills()
	if err := a.registerManage(); err != nil { // web_skills.go
		return err
	}
	l := a.cfg.Exec.Limits
	rt := skills.Runtime{Runner: &sandbox.Runner{AllowWithoutLandlock: a.cfg.Exec.AllowWithoutLandlock, Warn: a.warn},
		Limits: sandbox.Limits{CPUSeconds: l.CPUSeconds, MemoryMB: l.MemoryMB, NProc: l.NProc, FSizeMB: l.FSizeMB, OutputKB: l.OutputKB, NoFile: 256}}
	// A skill whose name is a namespace already registered is left out
	// (its tools would mix with those, and rules about them would cover
	// it); it never stops the others, nor the daemon.
	taken := a.reg.Namespaces()
	var loaded []*skills.Skill
	for _, s := range list {
		if slices.Contains(taken, s.Name()) {
			err := fmt.Errorf("skill %s: the name is the namespace of tools already registered", s.Name())
			a.skillErrs = append(a.skillErrs, err)
			a.warn("skill not loaded: " + err.Error())
			continue
		}
		if err := skills.Register(a.reg, s, rt); err != nil {
			return err
		}
		loaded = append(loaded, s)
	}
	a.skillList = loaded
	return skills.RegisterRead(a.reg, loaded)
}

// skillNamespaces are the policy's Policy.Skills: each loaded skill with
// tools, and whether the owner granted them at install.
func (a *Core) skillNamespaces() map[string]bool {
	var m map[string]bool
	for _, s := range a.loadSkills() {
		if len(s.Tools) == 0 {
			continue
		}
		if m == nil {
			m = map[string]bool{}
		}
		m[s.Name()] = s.Granted
	}
	return m
}

// skillsSystem is the agent's system text with the skills' index after it.
func (a *Core) skillsSystem() string {
	idx := skills.Index(a.loadSkills(), a.cfg.Skills.PromptBudget)
	return strings.TrimSpace(strings.Join([]string{a.cfg.Agent.System, idx}, "\n\n"))
}
