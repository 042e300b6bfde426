package agent

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/chat"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/tools/sys"
)

// layoutUnits splits a rendered prompt into what the comparison walks: its
// tokens with the real Qwen tokenizer (layout_llamacpp_test.go, under the
// llamacpp tag), else its bytes.
var layoutUnits = byteUnits

func byteUnits(t *testing.T, text string) (units []string, kind string) {
	units = make([]string, len(text))
	for i := range text {
		units[i] = text[i : i+1]
	}
	return units, "byte"
}

// sharedStart compares the prompt whose state the runner keeps with the next
// prompt, which should start with all of it: "" when it does, else the first
// unit that differs, its position, and the two pieces from there.
func sharedStart(t *testing.T, saved, next string) string {
	t.Helper()
	return firstDiff(t, layoutUnits, saved, next)
}

// firstDiff is sharedStart in the units split gives.
func firstDiff(t *testing.T, split func(*testing.T, string) ([]string, string), saved, next string) string {
	t.Helper()
	a, kind := split(t, saved)
	b, _ := split(t, next)
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) {
		return ""
	}
	piece := func(u []string) string {
		if i >= len(u) {
			return "(the end)"
		}
		return fmt.Sprintf("%q", strings.Join(u[i:min(i+24, len(u))], ""))
	}
	return fmt.Sprintf("the prompts differ at %s %d of the %d kept (%d shared): the kept one has %s, the next one %s",
		kind, i, len(a), i, piece(a), piece(b))
}

// The prompt is laid out for the local runner's cache: the system turn (the
// system text, persona, skills' index and tools) is byte for byte the same
// for every message of every session, in a stable order, and what a turn
// adds (the recalled notes, the person's words) comes after the earlier
// turns. So the part of a prompt the runner keeps (the system turn and the
// earlier turns, chat.RenderLayout) starts the next message's prompt, in the
// same process and after a restart, whatever the session's summary, the
// notes recalled, or the tools a message points at.
func TestPromptLayoutForTheCache(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, memory.SoulFile), "You are Pip: cheerful, and brief.")
	writeFile(t, filepath.Join(dir, memory.UserFile), "Ann owns the board.")
	writeFile(t, filepath.Join(dir, memory.MemoryFile), memory.Header+
		"- The relay drives the garage door.\n- Bins go out on Tuesday evening.\n")
	skillsIndex := "Skills (call @skill/read{name=\"...\"} for one's instructions before following it):\n- plants: water the plants"
	opt := Options{Compact: true, System: "Answer in English.\n\n" + skillsIndex, Limits: Limits{History: 8}}
	e, _ := memEnv(t, dir, opt)
	if err := sys.Register(e.reg, sys.Info{Version: "test"}); err != nil { // more tools than the local tier offers
		t.Fatal(err)
	}
	tmpl, err := chat.Named(string(chat.Qwen25))
	if err != nil {
		t.Fatal(err)
	}
	e.p.Last = &agenttest.Step{Text: "Done."}
	e.p.Add(agenttest.Step{Text: qwenCall("gpio/write", `{"pin":"relay","value":1}`)}, agenttest.Step{Text: "The relay is on."})

	type prompt struct {
		msg    string
		text   string
		layout chat.Layout
	}
	var prompts []prompt // the first step's prompt of each message
	var last prompt      // the last step's prompt of the last message
	turn := func(ag *Agent, p *agenttest.Provider, msg string) {
		t.Helper()
		n := len(p.Requests())
		if _, err := ag.Turn(context.Background(), In{Channel: console, User: user, Text: msg}); err != nil {
			t.Fatal(err)
		}
		reqs := p.Requests()[n:]
		for i, req := range reqs {
			text, l, err := tmpl.RenderLayout(req)
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				prompts = append(prompts, prompt{msg, text, l})
			}
			last = prompt{msg, text, l}
		}
	}
	msgs := []string{
		"switch the relay on",                          // a call, its result
		"which evening do the bins go out?",            // notes recalled into the message
		"please remember that the garage door is blue", // points at a tool the local tier does not offer by default
		"and the relay off again",                      // the previous message still points at it; History (8) folds the first turn
		"thanks",                                       // the default tools again, after the summary
	}
	for _, m := range msgs {
		turn(e.ag, e.p, m)
	}
	// A restart: a new agent over the same store and workspace.
	p2 := agenttest.New()
	p2.Capabilities, p2.Last = e.p.Capabilities, &agenttest.Step{Text: "Morning."}
	opt2 := e.opt
	opt2.Provider = p2
	ag2, err := New(opt2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag2.Recover(); err != nil {
		t.Fatal(err)
	}
	saved := last // what the runner keeps when the daemon stops
	turn(ag2, p2, "good morning")

	sys0 := prompts[0].text[:prompts[0].layout.System]
	defaults := toolNames(sys0)
	summarized := false
	for _, p := range prompts {
		system := p.text[:p.layout.System]
		if strings.Contains(system, "Earlier in this conversation") || strings.Contains(system, "Notes from memory") {
			t.Errorf("message %q: the system turn holds what changes by session or message:\n%s", p.msg, system)
		}
		summarized = summarized || strings.Contains(p.text[p.layout.System:], "Earlier in this conversation (summarized):\n- asked: switch the relay on")
		if p.msg == msgs[2] || p.msg == msgs[3] {
			// The tools the message points at come last, after the default tools kept,
			// which come in their order: the system turn differs from the first one left out.
			names := toolNames(system)
			var want []string
			for _, d := range defaults {
				if slices.Contains(names, d) {
					want = append(want, d)
				}
			}
			if !slices.Contains(names, "memory/save") || len(want) == len(names) || !slices.Equal(names[:len(want)], want) {
				t.Errorf("message %q: tools %v, want the defaults kept %v, then memory/save and the others it points at", p.msg, names, want)
			}
			if d := firstDiff(t, byteUnits, sys0[:strings.Index(sys0, "<tools>")], system); d != "" {
				t.Errorf("message %q: the system text changed: %s", p.msg, d)
			}
			continue
		}
		if d := sharedStart(t, sys0, system); d != "" || len(system) != len(sys0) {
			t.Errorf("message %q: the system turn changed: %s", p.msg, d)
		}
	}
	if !summarized {
		t.Errorf("no summary after the system turn")
	}
	if !strings.Contains(prompts[1].text[prompts[1].layout.Session:], memory.RecallHeader) {
		t.Errorf("no notes recalled into the message: %s", prompts[1].text)
	}
	// The kept part of the first message's prompt starts the second's: the call,
	// its result, the notes recalled for the second message come after.
	if d := sharedStart(t, prompts[0].text[:prompts[0].layout.Session], prompts[1].text); d != "" {
		t.Errorf("from %q to %q: %s", prompts[0].msg, prompts[1].msg, d)
	}
	// After the restart: the kept part of the last prompt before it starts the first prompt after it.
	after := prompts[len(prompts)-1]
	if d := sharedStart(t, saved.text[:saved.layout.Session], after.text); d != "" {
		t.Errorf("after a restart: %s", d)
	}
	keptUnits, kind := layoutUnits(t, saved.text[:saved.layout.Session])
	allUnits, _ := layoutUnits(t, after.text)
	systemUnits, _ := layoutUnits(t, after.text[:after.layout.System])
	kept, all := len(keptUnits), len(allUnits)
	t.Logf("after a restart: %d of %d %ss of the first prompt kept (%.1f %%); the system turn alone: %d (%.1f %%)",
		kept, all, kind, 100*float64(kept)/float64(all), len(systemUnits), 100*float64(len(systemUnits))/float64(all))
	if float64(kept) < 0.9*float64(all) {
		t.Errorf("after a restart only %d of %d %ss of the prompt were kept", kept, all, kind)
	}
}

// toolNames are the names of the tools in a rendered system turn, in order.
func toolNames(system string) []string {
	var names []string
	for _, l := range strings.Split(system, "\n") {
		if rest, ok := strings.CutPrefix(l, `{"type": "function", "function": {"name": "`); ok {
			names = append(names, rest[:strings.Index(rest, `"`)])
		}
	}
	return names
}

// The summary goes at the start of the first message after the system prompt,
// a person's message, or in a message of its own before any other.
func TestWithSummary(t *testing.T) {
	sys := llm.Message{Role: llm.RoleSystem, Content: "S"}
	got := withSummary([]llm.Message{sys, {Role: llm.RoleUser, Content: "hi"}}, "- asked: x")
	if len(got) != 2 || got[0].Content != "S" || got[1].Content != summaryHeader+"- asked: x\n\nhi" {
		t.Errorf("before a person's message: %+v", got)
	}
	got = withSummary([]llm.Message{sys, {Role: llm.RoleAssistant, Content: "ok"}}, "- asked: x")
	if len(got) != 3 || got[1].Role != llm.RoleUser || got[1].Content != summaryHeader+"- asked: x" || got[2].Content != "ok" {
		t.Errorf("before an assistant's: %+v", got)
	}
	if got := withSummary([]llm.Message{sys, {Role: llm.RoleUser, Content: "hi"}}, ""); got[1].Content != "hi" {
		t.Errorf("no summary: %+v", got)
	}
}
