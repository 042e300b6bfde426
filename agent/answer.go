package agent

// This file: the answer the person reads: streamed text, notes, and the closing
// lines, history and final state written when a turn ends.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/store"
)

// say adds text to the answer and passes it on to a streaming channel.
func (t *turn) say(s string) {
	if s == "" {
		return
	}
	t.reply.WriteString(s)
	if t.in.Emit != nil {
		t.in.Emit(s)
	}
}

// sayLine starts s on a line of its own.
func (t *turn) sayLine(s string) {
	t.sep()
	t.say(s)
}

// stream passes on the model's text as it comes: the provider sends only text that
// is certainly not a tool call. What is shown is also in the answer.
func (t *turn) stream(all string) {
	if t.in.Emit == nil {
		return
	}
	vis := strings.TrimSpace(all)
	if len(vis) > len(t.shown) && strings.HasPrefix(vis, t.shown) {
		if t.shown == "" {
			t.sep()
		}
		t.say(vis[len(t.shown):])
		t.shown = vis
	}
}

// sep starts a new line in the answer if it has text that does not end one.
func (t *turn) sep() {
	if r := t.reply.String(); r != "" && !strings.HasSuffix(r, "\n") {
		t.say("\n")
	}
}

// flushText completes the answer with a step's text; the part already streamed is
// not repeated.
func (t *turn) flushText(say string) {
	shown := t.shown
	t.shown = ""
	if say == "" {
		return
	}
	if shown != "" && strings.HasPrefix(say, shown) {
		t.say(say[len(shown):])
		return
	}
	t.sep()
	t.say(say)
}

// note adds a line told at the end of the answer, once however often it comes up.
func (t *turn) note(n string) {
	if !slices.Contains(t.notes, n) {
		t.notes = append(t.notes, n)
	}
}

// maxHistoryMessage caps one message kept in a session's history.
const maxHistoryMessage = 4 << 10

// finish writes the answer's end, the history and the final state.
func (t *turn) finish(stop string, final State) Out {
	a := t.a
	r := t.rec()
	switch stop {
	case "answered", "question":
	case "model", "store":
		if stop == "store" && !strings.Contains(t.reply.String(), "audit trail") {
			t.sayLine("I had to stop: the store on this board failed, so nothing more was run.")
		}
	default:
		t.sayLine("I stopped before finishing: " + stopReason(stop, a.lim) + ".")
	}
	if stop != "answered" && stop != "question" {
		if done := t.summaryOfCalls(); done != "" {
			t.sayLine(done)
		} else {
			t.sayLine("Nothing was run.")
		}
	}
	for _, n := range t.notes {
		t.sayLine("(" + n + ")")
	}
	r.Stop = stop
	t.s.rec.Tokens += t.tokens
	t.s.rec.Cost += t.cost
	text := strings.TrimSpace(t.reply.String())

	// History: the turn's messages, with the tool results reduced to a line (the model
	// has read them), and the answer as the person saw it.
	h := &t.s.h
	for _, m := range t.msgs {
		if m.Role == llm.RoleTool {
			m.Content = consumedLine(m)
		}
		if m.Role == llm.RoleUser && strings.HasPrefix(m.Content, "(clawedge: ") {
			continue
		}
		// A message is capped in the history: one pasted log must not fill the
		// session's record (the store caps it at 256 KiB) or the next prompts.
		m.Content = store.CapString(m.Content, maxHistoryMessage)
		h.Messages = append(h.Messages, m)
	}
	h.Messages = append(h.Messages, llm.Message{Role: llm.RoleAssistant, Content: store.CapString(text, 2000)})
	// Keep alternation valid for remote APIs: an assistant message with calls whose
	// results are in is fine; a dangling one (a repair) is fine as text.
	if n := len(h.Messages) - a.lim.History; n > 0 {
		cut := n
		for cut < len(h.Messages) && h.Messages[cut].Role != llm.RoleUser {
			cut++
		}
		h.Summary = summarize(h.Summary, h.Messages[:cut], 1500)
		h.Messages = append([]llm.Message(nil), h.Messages[cut:]...)
	}
	if !CanTransition(t.s.rec.State, final) {
		final = Halted
	}
	t.s.rec.State = final
	t.s.publish()
	if err := a.saveSteps(t.s, true, t.pendingSteps); err != nil {
		a.log.Error("agent: saving the session at the end of a turn", "session", printableKey(t.s.key), "err", err)
	}
	return Out{Text: text, State: final, Stop: stop, Calls: t.calls}
}

// summaryOfCalls says what was done, one line per call.
func (t *turn) summaryOfCalls() string {
	if len(t.calls) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("What was done:")
	for _, c := range t.calls {
		fmt.Fprintf(&b, "\n- %s: %s", c.Call, c.Status)
		if c.Result != "" && (c.Status == callOK || c.Status == callFailed) {
			b.WriteString(" (" + strings.TrimPrefix(strings.TrimPrefix(c.Result, "ok: "), "error: ") + ")")
		}
	}
	return b.String()
}
