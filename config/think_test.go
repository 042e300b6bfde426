package config

import "testing"

// agent.think and models.local.think_budget: off and 256 tokens by default,
// decoded as written, and kept by Redacted.
func TestThinkKeys(t *testing.T) {
	c := mustParse(t, "models:\n  local: {path: m.gguf}\n")
	if c.Agent.Think || c.Models.Local.ThinkBudget != 256 {
		t.Fatalf("defaults: think %v, think_budget %d", c.Agent.Think, c.Models.Local.ThinkBudget)
	}
	c = mustParse(t, "models:\n  local: {path: m.gguf, think_budget: 300}\nagent: {think: true, reply_tokens: 800}\n")
	if !c.Agent.Think || c.Models.Local.ThinkBudget != 300 {
		t.Fatalf("think %v, think_budget %d", c.Agent.Think, c.Models.Local.ThinkBudget)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	back := mustParse(t, string(out))
	if !back.Agent.Think || back.Models.Local.ThinkBudget != 300 {
		t.Errorf("after Redacted: think %v, think_budget %d\n%s", back.Agent.Think, back.Models.Local.ThinkBudget, out)
	}
}

// Bad values are told at their line and column: no "unlimited" budget, and with
// thinking on, a budget that leaves the answer no room in the reply.
func TestThinkProblems(t *testing.T) {
	const local = "models:\n  local: {path: m.gguf"
	for _, tc := range []struct{ src, at, msg string }{
		{"agent: {think: maybe}\n", "maybe", `agent.think: expected true or false, found "maybe"`},
		{local + ", think_budget: 0}\n", "0}", "models.local.think_budget: must be from 16 to 32768 tokens (agent.think: false turns thinking off), found 0"},
		{local + ", think_budget: lots}\n", "lots", `models.local.think_budget: expected an integer, found "lots"`},
		{local + ", think_budget: 600}\nagent: {think: true}\n", "600",
			"models.local.think_budget: must be below agent.reply_tokens (512), which bounds the whole reply, reasoning included, found 600"},
		{local + "}\nagent: {think: true, reply_tokens: 200}\n", "200",
			"agent.reply_tokens: must be above models.local.think_budget (256 by default) when agent.think is true: it bounds the whole reply, reasoning included, found 200"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
	// Thinking off, the budget is not in the way of a short reply.
	mustParse(t, local+", think_budget: 600}\nagent: {reply_tokens: 200}\n")
}
