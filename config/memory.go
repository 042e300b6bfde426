package config

import (
	"strconv"

	"github.com/goccy/go-yaml/ast"
)

// Long-term memory and persona (docs/memory.md): the workspace
// data_dir/workspace with SOUL.md, USER.md and MEMORY.md.
//
//	memory: {enabled: true, recall_tokens: 600, local_recall_tokens: 150, persona_tokens: 400}
//
// On by default: with no files in the workspace nothing is added to a prompt.
// Decoding, validation and the Redacted writer are here.

// Memory configures the workspace, its tools and what a turn recalls.
type Memory struct {
	// Enabled registers the memory tools and puts the workspace in prompts.
	Enabled bool `yaml:"enabled"`
	// RecallTokens and LocalRecallTokens bound the entries recalled into a
	// turn for a remote and for the local model.
	RecallTokens      int `yaml:"recall_tokens"`
	LocalRecallTokens int `yaml:"local_recall_tokens"`
	// PersonaTokens bounds SOUL.md and USER.md together in the local
	// model's prompt; `clawedge doctor` warns when they are longer.
	PersonaTokens int `yaml:"persona_tokens"`
	// MaxEntries and MaxBytes bound MEMORY.md.
	MaxEntries int `yaml:"max_entries"`
	MaxBytes   int `yaml:"max_bytes"`
}

func defaultMemory() Memory {
	return Memory{Enabled: true, RecallTokens: 600, LocalRecallTokens: 150, PersonaTokens: 400, MaxEntries: 10000, MaxBytes: 4 << 20}
}

var memoryKeys = []string{"enabled", "recall_tokens", "local_recall_tokens", "persona_tokens", "max_entries", "max_bytes"}

func (d *decoder) memory(n ast.Node, m *Memory) {
	d.fields(n, "memory", memoryKeys, func(k string, v ast.Node) {
		kp := "memory." + k
		switch k {
		case "enabled":
			d.boolean(v, kp, &m.Enabled)
		case "recall_tokens":
			d.intIn(v, kp, &m.RecallTokens, 0, 32768)
		case "local_recall_tokens":
			d.intIn(v, kp, &m.LocalRecallTokens, 0, 8192)
		case "persona_tokens":
			d.intIn(v, kp, &m.PersonaTokens, 0, 8192)
		case "max_entries":
			d.intIn(v, kp, &m.MaxEntries, 1, 100000)
		case "max_bytes":
			d.intIn(v, kp, &m.MaxBytes, 1024, 64<<20)
		}
	})
}

func (c *Config) writeMemory(w *writer) {
	if c.Memory == defaultMemory() {
		return
	}
	m := c.Memory
	w.key(0, "memory")
	w.kv(1, "enabled", strconv.FormatBool(m.Enabled))
	w.kv(1, "recall_tokens", strconv.Itoa(m.RecallTokens))
	w.kv(1, "local_recall_tokens", strconv.Itoa(m.LocalRecallTokens))
	w.kv(1, "persona_tokens", strconv.Itoa(m.PersonaTokens))
	w.kv(1, "max_entries", strconv.Itoa(m.MaxEntries))
	w.kv(1, "max_bytes", strconv.Itoa(m.MaxBytes))
}
