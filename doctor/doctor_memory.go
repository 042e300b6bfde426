package doctor

// This file: doctor's look at the workspace (docs/memory.md): whether MEMORY.md
// reads, and whether the persona and user files fit the local model's prompt.

import (
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/memory"
)

func Memory(cfg *config.Config) Check {
	c := Check{What: "memory"}
	m := cfg.Memory
	if !m.Enabled {
		c.OK, c.Info = true, "off (memory.enabled: false)"
		return c
	}
	w, err := daemon.OpenWorkspace(cfg)
	if err == nil {
		var st memory.Stats
		if st, err = w.Rebuild(); err == nil {
			c.Info = fmt.Sprintf("%d entries in %s", st.Entries, daemon.WorkspaceDir(cfg))
			if len(st.Problems) > 0 {
				c.Warn = true
				c.Info += "; " + strings.Join(st.Problems[:min(3, len(st.Problems))], "; ")
				c.Fix = "correct those lines of MEMORY.md (clawedge memory rebuild lists every problem)"
			}
		}
	}
	if err != nil {
		c.Info, c.Fix = err.Error(), "shorten or repair MEMORY.md by hand, or raise memory.max_bytes"
		return c
	}
	c.OK = true
	soul, user, cut, err := w.Persona()
	if err != nil {
		c.OK, c.Info, c.Fix = false, err.Error(), "make SOUL.md and USER.md readable by clawedge"
		return c
	}
	tokens := (len(soul) + len(user) + 2) / 3 // as the agent counts: about 3 bytes a token
	c.Info += fmt.Sprintf("; persona and user files about %d tokens", tokens)
	switch local := cfg.Models.Local; {
	case cut:
		c.Warn = true
		c.Info += fmt.Sprintf("; SOUL.md or USER.md is over %d bytes and is cut there", memory.DefaultMaxPersonaBytes)
		c.Fix = "shorten SOUL.md and USER.md: every token of them is in every prompt"
	case local != nil && m.PersonaTokens > 0 && tokens > m.PersonaTokens:
		c.Warn = true
		c.Info += fmt.Sprintf(", over the local model's budget of %d (memory.persona_tokens): its prompt gets them cut", m.PersonaTokens)
		c.Fix = "shorten SOUL.md and USER.md (a Pi prefills every token of them at a cold start), or raise memory.persona_tokens"
	case local != nil && local.Context > 0 && m.PersonaTokens+m.LocalRecallTokens > local.Context/4:
		c.Warn = true
		c.Info += fmt.Sprintf("; memory.persona_tokens + memory.local_recall_tokens (%d) take over a quarter of the local context (%d)", m.PersonaTokens+m.LocalRecallTokens, local.Context)
		c.Fix = "lower memory.persona_tokens or memory.local_recall_tokens, or raise models.local.context"
	}
	return c
}
