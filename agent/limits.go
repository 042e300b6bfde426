package agent

// This file: the bounds of one turn, their defaults, and how a stop is told.

import (
	"fmt"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/policy"
)

// Limits bound one turn. Zero fields take the defaults (DefaultLimits).
type Limits struct {
	// MaxIterations is how many model steps of a turn may call tools.
	MaxIterations int
	// MaxTokens bounds the tokens of a turn, prompts and replies of every step summed.
	MaxTokens int
	// MaxTime bounds a turn's wall time, approvals included.
	MaxTime time.Duration
	// MaxCost bounds a turn's cost in the providers' currency units; 0: no bound.
	MaxCost float64
	// MaxRepeats is how many times one identical call (same tool, same arguments)
	// may run in a turn; the next one stops the turn.
	MaxRepeats int
	// ToolOutput caps a tool result fed back to the model, in bytes, by tool name or
	// pattern ("serial/read", "serial/*", "*").
	ToolOutput map[string]int
	// ReplyTokens bounds one model reply.
	ReplyTokens int
	// LocalTools is how many tools a local model is offered at most.
	LocalTools int
	// CallsPerOutput is how many tool calls one model output may hold (the
	// constraint's bound); 0 means grammar.DefaultMaxCalls.
	CallsPerOutput int
	// ToolChoice is agent.tool_choice: "required" holds each turn's first
	// model step to a call, "none" every step to an answer.
	ToolChoice llm.ToolChoice
	// History is how many messages a session keeps before folding the oldest turns
	// into its summary.
	History int
	// ApprovalTimeout is how long an `ask` call waits for a person; then it is denied.
	ApprovalTimeout time.Duration
}

// DefaultLimits are the limits of a turn when the config sets none.
var DefaultLimits = Limits{
	MaxIterations:   10,
	MaxTokens:       48000,
	MaxTime:         3 * time.Minute,
	MaxRepeats:      2,
	ToolOutput:      map[string]int{"*": 1500},
	ReplyTokens:     512,
	LocalTools:      10,
	History:         24,
	ApprovalTimeout: 2 * time.Minute,
}

// withDefaults is l with DefaultLimits where l sets nothing (zero, or below).
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	d.MaxIterations = positive(l.MaxIterations, d.MaxIterations)
	d.MaxTokens = positive(l.MaxTokens, d.MaxTokens)
	d.MaxTime = positive(l.MaxTime, d.MaxTime)
	d.MaxCost = positive(l.MaxCost, d.MaxCost)
	d.MaxRepeats = positive(l.MaxRepeats, d.MaxRepeats)
	if len(l.ToolOutput) > 0 {
		d.ToolOutput = l.ToolOutput
	}
	d.ReplyTokens = positive(l.ReplyTokens, d.ReplyTokens)
	d.CallsPerOutput = positive(l.CallsPerOutput, d.CallsPerOutput)
	d.ToolChoice = l.ToolChoice
	d.LocalTools = positive(l.LocalTools, d.LocalTools)
	d.History = positive(l.History, d.History)
	d.ApprovalTimeout = positive(l.ApprovalTimeout, d.ApprovalTimeout)
	return d
}

// positive is v when it is set (above zero), else def.
func positive[T int | float64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

func (l Limits) toolOutput(tool string) int {
	if n, ok := policy.Match(l.ToolOutput, tool); ok && n > 0 {
		return n
	}
	return 1500
}

func stopReason(stop string, l Limits) string {
	switch stop {
	case "iterations":
		return fmt.Sprintf("the limit of %d tool steps per message was reached", l.MaxIterations)
	case "tokens":
		return fmt.Sprintf("the token budget of %d per message was used up", l.MaxTokens)
	case "time":
		return fmt.Sprintf("the time limit of %s per message ran out", l.MaxTime)
	case "cost":
		return fmt.Sprintf("the cost budget of %g per message was used up", l.MaxCost)
	case "repeat":
		return "the model kept repeating the same call"
	case "cancelled":
		return "the request was cancelled"
	}
	return stop
}
