package config

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Skills in the Agent Skills format, installed in data_dir/skills
// (docs/skills.md):
//
//	skills:
//	  trust: ["ed25519:<base64>"]   # keys whose signed skills install and load
//	  allow_unsigned: false         # true: unsigned skills install once the owner confirms
//	  prompt_budget: 1200           # bytes of the system prompt the skills' index may take
//
// Decoding, validation and the Redacted writer of the section are here.

// Skills says which skills may be installed and loaded.
type Skills struct {
	Trust         []string `yaml:"trust"`
	AllowUnsigned bool     `yaml:"allow_unsigned"`
	PromptBudget  int      `yaml:"prompt_budget"`
}

var skillsKeys = []string{"trust", "allow_unsigned", "prompt_budget"}

func (d *decoder) skills(n ast.Node, s *Skills) {
	d.fields(n, "skills", skillsKeys, func(k string, v ast.Node) {
		switch k {
		case "trust":
			s.Trust = d.strings(v, "skills.trust")
		case "allow_unsigned":
			d.boolean(v, "skills.allow_unsigned", &s.AllowUnsigned)
		case "prompt_budget":
			d.intField(v, "skills.prompt_budget", &s.PromptBudget)
		}
	})
}

func (d *decoder) validateSkills(s *Skills) {
	for i, k := range s.Trust {
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(k, "ed25519:"))
		if !strings.HasPrefix(k, "ed25519:") || err != nil || len(b) != 32 {
			p := fmt.Sprintf("skills.trust[%d]", i)
			d.errf(p, "%s: want \"ed25519:<base64 of 32 bytes>\" (the .pub file `clawedge update keygen` writes)", d.quote(p, k))
		}
	}
	if s.PromptBudget < 0 || s.PromptBudget > 16384 {
		d.errf("skills.prompt_budget", "%d: want 0 (the default, 1200) to 16384 bytes", s.PromptBudget)
	}
}

func (c *Config) writeSkills(w *writer) {
	s := c.Skills
	if len(s.Trust) == 0 && !s.AllowUnsigned && s.PromptBudget == 0 {
		return
	}
	w.key(0, "skills")
	if len(s.Trust) > 0 {
		w.key(1, "trust")
		for _, k := range s.Trust {
			w.item(2, w.str(k))
		}
	}
	if s.AllowUnsigned {
		w.kv(1, "allow_unsigned", "true")
	}
	if s.PromptBudget != 0 {
		w.kv(1, "prompt_budget", strconv.Itoa(s.PromptBudget))
	}
}
