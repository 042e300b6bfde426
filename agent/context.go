package agent

import (
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/store"
)

// baseSystem is the fixed start of every system prompt. It is short because on the
// local tier every token of it is prefilled on a Pi's CPU; it is fixed so that the
// runner's KV cache reuses it from one turn to the next.
const baseSystem = "You are clawedge, the assistant of a small board. " +
	"You act on the board only by calling the tools; never say you did something you did not call. " +
	"If no tool is needed, answer directly. Keep answers short."

// priority is the order tools are offered in when nothing in the message points
// elsewhere: the everyday ones first. Unknown tools come after, by name.
var priority = []string{
	"gpio/write", "gpio/read", "gpio/toggle", "gpio/pulse", "gpio/list", "sys/status",
	"gpio/wait", "serial/send", "serial/read", "serial/expect", "serial/list",
	"i2c/read", "i2c/write", "i2c/scan", "i2c/list", "sys/help", "sys/audit",
}

// cues are words that point at a namespace without naming a tool.
var cues = map[string]string{
	"light": "gpio", "lamp": "gpio", "led": "gpio", "relay": "gpio", "pin": "gpio", "pins": "gpio",
	"switch": "gpio", "button": "gpio", "door": "gpio", "blink": "gpio", "on": "gpio", "off": "gpio",
	"serial": "serial", "uart": "serial", "port": "serial", "arduino": "serial", "send": "serial",
	"i2c": "i2c", "sensor": "i2c", "bus": "i2c", "register": "i2c", "address": "i2c",
	"status": "sys", "uptime": "sys", "version": "sys", "memory": "sys", "audit": "sys", "help": "sys",
	"remember": "memory", "forget": "memory", "note": "memory", "notes": "memory", "recall": "memory",
}

func rank(name string) int {
	if i := slices.Index(priority, name); i >= 0 {
		return i
	}
	return len(priority)
}

// selectTools picks the tools to offer for a message: only allowed ones (a denied
// tool is never shown), and at most max of them (0: all). The choice scores each
// tool by the words of the message and the recent history (its name, its namespace's
// cue words, the documented words and enum values such as pin names); with no cue
// the first max tools of the fixed priority order win, the defaults. The result is
// listed in the priority order, laid out for the local runner's KV cache, which
// keeps the system turn from one message to the next and across restarts
// (docs/prompt-layout.md): a tool a cue brings in ranks after every default, so it
// comes after the defaults kept, and it displaces the uncued defaults of lowest
// priority; the system turn then differs from the defaults' only from the first
// displaced one on.
func selectTools(specs []grammar.ToolSpec, allowed func(string) bool, text string, max int) []grammar.ToolSpec {
	var cands []grammar.ToolSpec
	for _, s := range specs {
		if allowed(s.Name) {
			cands = append(cands, s)
		}
	}
	if max <= 0 || len(cands) <= max {
		sortByPriority(cands)
		return cands
	}
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) {
		words[w] = true
	}
	type scored struct {
		s     grammar.ToolSpec
		score int
	}
	ss := make([]scored, len(cands))
	for i, s := range cands {
		ns, name, _ := strings.Cut(s.Name, "/")
		sc := 0
		if words[name] || words[s.Name] {
			sc += 4
		}
		if words[ns] {
			sc += 2
		}
		for w := range words {
			if cues[w] == ns {
				sc += 2
				break
			}
		}
		for _, p := range s.Params {
			for _, e := range p.Enum {
				if words[strings.ToLower(e)] {
					sc += 3
				}
			}
		}
		for _, w := range strings.Fields(strings.ToLower(s.Doc)) {
			w = strings.Trim(w, ".,:;()=")
			if len(w) > 3 && words[w] {
				sc++
			}
		}
		ss[i] = scored{s, sc}
	}
	sort.SliceStable(ss, func(i, j int) bool {
		if ss[i].score != ss[j].score {
			return ss[i].score > ss[j].score
		}
		return rank(ss[i].s.Name) < rank(ss[j].s.Name) || rank(ss[i].s.Name) == rank(ss[j].s.Name) && ss[i].s.Name < ss[j].s.Name
	})
	out := make([]grammar.ToolSpec, 0, max)
	for _, x := range ss[:max] {
		out = append(out, x.s)
	}
	sortByPriority(out)
	return out
}

func sortByPriority(specs []grammar.ToolSpec) {
	sort.SliceStable(specs, func(i, j int) bool {
		ri, rj := rank(specs[i].Name), rank(specs[j].Name)
		if ri != rj {
			return ri < rj
		}
		return specs[i].Name < specs[j].Name
	})
}

// ToolDefs are specs as a model is shown them; compact (the local model's form)
// shortens the documentation. clawedge generate --tools shows the same.
func ToolDefs(specs []grammar.ToolSpec, compact bool) []llm.ToolDef {
	defs := make([]llm.ToolDef, len(specs))
	for i, s := range specs {
		doc := s.Doc
		if compact {
			doc = shorten(doc, 80)
		}
		defs[i] = llm.ToolDef{Name: s.Name, Doc: doc, Params: toolSchema(s, compact)}
	}
	return defs
}

// EstimateTokens is a conservative token count for a prompt as a chat template
// renders it: one token per 3 bytes (Qwen's tokenizer gives about 3.3 on the tool
// list's JSON, more on English), plus the role markers of each message, and for the
// tools the template's own instructions (about 100 tokens) and each definition's
// wrapper and the spaces its JSON gains when printed. The llamacpp-tagged test
// checks it against the real tokenizer: never below.
func EstimateTokens(msgs []llm.Message, defs []llm.ToolDef) int {
	n := 0
	for _, m := range msgs {
		n += 5 + (len(m.Content)+2)/3
		for _, c := range m.ToolCalls {
			n += 12 + (len(c.Name)+len(c.Arguments)*6/5+2)/3
		}
	}
	if len(defs) > 0 {
		n += 130
	}
	for _, d := range defs {
		n += (80 + len(d.Name) + len(d.Doc) + len(d.Params)*6/5) / 3
	}
	return n
}

// consumedLine is what a tool result becomes once the model has read it.
func consumedLine(m llm.Message) string {
	if strings.HasPrefix(m.Content, "[seen] ") {
		return m.Content
	}
	return "[seen] " + oneLine(m.Content, 120)
}

// fit makes a request's messages fit the window (in estimated tokens, tools included):
//
//  1. above 75%: tool results the model has already answered to (every one before the
//     last assistant message) are reduced to one line;
//  2. above 90%: the oldest finished turns are folded into the summary, a deterministic
//     digest (what was asked, which calls ran, the start of each answer) — no model
//     call, so compaction costs nothing and cannot fail;
//  3. still above: the current turn's tool results are cut to a line too;
//  4. still above: the person's message is cut (its end), rather than the model
//     refusing the request.
//
// msgs is [system, history..., this turn...]; turnStart indexes this turn's first
// message. It returns the messages to send and the turns folded (for the summary).
func fit(msgs []llm.Message, defs []llm.ToolDef, turnStart, window int) (out []llm.Message, folded []llm.Message) {
	if EstimateTokens(msgs, defs) <= window*3/4 {
		return msgs, nil
	}
	out = slices.Clone(msgs)
	lastAsst := -1
	for i := len(out) - 1; i >= 0; i-- {
		if out[i].Role == llm.RoleAssistant {
			lastAsst = i
			break
		}
	}
	for i := 0; i < lastAsst; i++ {
		if out[i].Role == llm.RoleTool {
			out[i].Content = consumedLine(out[i])
		}
	}
	for EstimateTokens(out, defs) > window*9/10 && turnStart > 1 {
		// Fold the oldest turn: from index 1 to the next user message.
		end := 2
		for end < turnStart && out[end].Role != llm.RoleUser {
			end++
		}
		folded = append(folded, out[1:end]...)
		out = append(out[:1:1], out[end:]...)
		turnStart -= end - 1
	}
	if EstimateTokens(out, defs) > window*9/10 {
		for i := turnStart; i < len(out); i++ {
			if out[i].Role == llm.RoleTool {
				out[i].Content = consumedLine(out[i])
			}
		}
	}
	// 4. still above: the message itself is too long (a pasted log); its end is cut
	// rather than the request refused.
	if over := EstimateTokens(out, defs) - window*9/10; over > 0 {
		for i := len(out) - 1; i >= turnStart && over > 0; i-- {
			if out[i].Role == llm.RoleUser && len(out[i].Content) > 1024 {
				keep := max(len(out[i].Content)-over*3, 1024)
				over -= (len(out[i].Content) - keep) / 3
				out[i].Content = store.CapString(out[i].Content, keep)
			}
		}
	}
	return out, folded
}

// summarize appends folded messages to a summary: one line per user message, call
// and answer, the most recent kept when it grows past max bytes.
func summarize(prev string, folded []llm.Message, max int) string {
	var b strings.Builder
	b.WriteString(prev)
	for _, m := range folded {
		switch m.Role {
		case llm.RoleUser:
			b.WriteString("\n- asked: " + clip(m.Content, 100))
		case llm.RoleAssistant:
			for _, c := range m.ToolCalls {
				b.WriteString("\n  called " + c.Name + " " + clip(string(c.Arguments), 80))
			}
			if m.Content != "" && len(m.ToolCalls) == 0 {
				b.WriteString("\n  answered: " + clip(m.Content, 100))
			}
		case llm.RoleTool:
			b.WriteString("\n  result: " + clip(strings.TrimPrefix(m.Content, "[seen] "), 80))
		}
	}
	s := strings.TrimLeft(b.String(), "\n")
	for len(s) > max {
		i := strings.Index(s[1:], "\n- ")
		if i < 0 {
			s = store.CapString(s, max)
			break
		}
		s = s[i+2:]
	}
	return s
}

// clip is s on one line, cut to about max bytes with an ellipsis.
func clip(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// systemPrompt is the system message: the fixed part, the persona and user files
// (memory's prefix), the configured extra (agent.system and the skills' index). It
// is the same for every message of every session, and after a restart: nothing of
// a session or a message goes there (docs/prompt-layout.md).
func systemPrompt(prefix, extra string) string {
	s := baseSystem
	if prefix != "" {
		s += "\n\n" + prefix + "\n"
	}
	if extra != "" {
		s += "\n" + extra
	}
	return s
}

// summaryHeader starts the summary of a session's folded turns.
const summaryHeader = "Earlier in this conversation (summarized):\n"

// withSummary puts the summary of folded turns before the first message after the
// system prompt (the oldest turn kept, a person's message: folding cuts before
// one): after the system turn, which the runner's saved state holds for every
// session, and before the turns that follow it. msgs is the request's own copy.
func withSummary(msgs []llm.Message, summary string) []llm.Message {
	if summary == "" || len(msgs) < 2 {
		return msgs
	}
	text := summaryHeader + summary
	if msgs[1].Role != llm.RoleUser { // not made by fit or finish; a message of its own then
		return slices.Insert(msgs, 1, llm.Message{Role: llm.RoleUser, Content: text})
	}
	msgs[1].Content = text + "\n\n" + msgs[1].Content
	return msgs
}

// summaryTokens is what withSummary adds, estimated as EstimateTokens counts.
func summaryTokens(summary string) int {
	if summary == "" {
		return 0
	}
	return (len(summaryHeader) + len(summary) + 2 + 2) / 3
}
