package agent

// This file: what a turn takes from long-term memory (the memory package,
// wired by cmd/clawedge; the agent knows only this interface).

import (
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// Memory is the workspace as a turn's prompt uses it.
type Memory interface {
	// Prefix is the persona and user files: part of the fixed system prompt,
	// the same from turn to turn, so the runner's prefix cache keeps it.
	// local: cut to the local tier's budget.
	Prefix(local bool) string
	// Recall is the entries relevant to text that caller may read (its own
	// and the shared ones), quoted as data, within about maxTokens; "" when
	// none is. caller is the turn's: the model acting for the message's
	// principal.
	Recall(caller tools.Caller, text string, maxTokens int) string
	// Summarized is told the summary of turns folded out of a session
	// (compaction), to keep it as an entry.
	Summarized(channel, user, summary string)
}

// Default recall budgets, in tokens: small on the local tier, where every
// token is prefilled on the board's CPU.
const (
	DefaultRecallTokens      = 600
	DefaultLocalRecallTokens = 150
)

// recall is the memory the turn's message is given: the relevant entries of
// the turn's principal and the shared ones, when the policy lets this
// caller's model read memory (memory/search not denied).
func (t *turn) recall(local bool) string {
	a := t.a
	if a.opt.Memory == nil || !a.opt.Policy.Offered(t.caller(), "memory/search") {
		return ""
	}
	budget := a.opt.RecallTokens
	if budget == 0 {
		budget = DefaultRecallTokens
	}
	if local {
		budget = a.opt.LocalRecallTokens
		if budget == 0 {
			budget = DefaultLocalRecallTokens
		}
	}
	return a.opt.Memory.Recall(t.caller(), t.in.Text, budget)
}

// withRecall is the turn's first message with the recalled entries before the
// person's words. Only the request carries them, never the history: they come
// after the fixed prefix and the earlier turns, which the runner's cache keeps.
func withRecall(m llm.Message, recall string) llm.Message {
	if recall != "" {
		m.Content = recall + "\n\n" + m.Content
	}
	return m
}

// remember saves the summary of folded turns in memory. Tool results are left
// out: what a tool printed (a web page, an MQTT payload) never becomes a note.
func (t *turn) remember(folded []llm.Message) {
	if t.a.opt.Memory == nil {
		return
	}
	var said []llm.Message
	for _, m := range folded {
		if m.Role != llm.RoleTool {
			said = append(said, m)
		}
	}
	if s := summarize("", said, 1000); s != "" {
		t.a.opt.Memory.Summarized(t.in.Channel, t.in.User, s)
	}
}
