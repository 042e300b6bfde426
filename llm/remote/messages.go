package remote

import (
	"encoding/json"
	"strconv"

	"github.com/clawedge/clawedge/llm"
)

// WithCallIDs returns msgs with an ID on every tool call and a ToolCallID on
// every tool result. The remote APIs pair results with calls by ID, but a
// conversation the local model took part in has none (its template pairs
// them by order): a missing call ID is made up from the message's position,
// and a result without one takes the ID of the first call of the assistant
// message before it that no result has claimed yet. msgs is not modified.
func WithCallIDs(msgs []llm.Message) []llm.Message {
	need := false
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			need = need || c.ID == ""
		}
		need = need || (m.Role == llm.RoleTool && m.ToolCallID == "")
	}
	if !need {
		return msgs
	}
	out := make([]llm.Message, len(msgs))
	var pending []string // IDs of the last assistant message's calls not yet answered
	for i, m := range msgs {
		switch {
		case m.Role == llm.RoleAssistant && len(m.ToolCalls) > 0:
			m.ToolCalls = append([]llm.ToolCall(nil), m.ToolCalls...)
			pending = pending[:0]
			for j := range m.ToolCalls {
				if m.ToolCalls[j].ID == "" {
					m.ToolCalls[j].ID = "call_" + strconv.Itoa(i) + "_" + strconv.Itoa(j)
				}
				pending = append(pending, m.ToolCalls[j].ID)
			}
		case m.Role == llm.RoleTool:
			if m.ToolCallID == "" && len(pending) > 0 {
				m.ToolCallID = pending[0]
			}
			for j, id := range pending {
				if id == m.ToolCallID {
					pending = append(pending[:j], pending[j+1:]...)
					break
				}
			}
		}
		out[i] = m
	}
	return out
}

// Arguments makes a call's arguments, as a model streamed them, valid JSON
// for llm.ToolCall: "" is {}, and text that is not JSON becomes a JSON
// string holding it, which the agent's validation then refuses with a
// message the model can act on (a RawMessage that is not JSON would break
// whoever stores the conversation).
func Arguments(raw []byte) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("{}")
	}
	if json.Valid(raw) {
		return json.RawMessage(raw)
	}
	b, _ := json.Marshal(string(raw))
	return b
}
