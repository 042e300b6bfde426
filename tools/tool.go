// Package tools defines what a tool is (a grammar.ToolSpec and a Run method),
// the registry of tools, and the runner: Prepare and Call run one call from
// structured arguments, Run a parsed command line (chains, parallel blocks,
// references), each call with an audit record written before its effect. The
// spec vocabulary is grammar's alone (ToolSpec, ArgSpec, ArgType, Args,
// ArgError): this package gives it no second names.
package tools

import (
	"context"

	"github.com/clawedge/clawedge/grammar"
)

// Tool is one callable capability, "gpio/write" for example.
// Run is only ever called with args that passed Spec().Validate.
type Tool interface {
	Spec() grammar.ToolSpec
	Run(ctx context.Context, args grammar.Args) (Result, error)
}

// Result is what a tool returns: Text for people, Fields for the next stage of a
// chain ($prev.NAME) and for machine-readable output.
type Result struct {
	Text   string
	Fields map[string]grammar.Value
	// Audit, when set, is what the audit trail keeps of the result instead
	// of Text: Text holds what is the caller's alone (a pairing code).
	Audit string
}

// Float returns a pointer to f, for grammar.ArgSpec Min and Max literals.
func Float(f float64) *float64 { return &f }

// Redacting is a tool with an argument only its caller may know (the code
// that pairs another board, board/add): the audit trail keeps the command as
// AuditCommand renders it, that argument left out.
type Redacting interface {
	AuditCommand(args grammar.Args) string
}

// ReadOnly is a tool without effects (a pin's level, the lists, the status):
// nothing an interruption could leave half done, so its audit record is
// written after it ran, in a group commit (ReadAuditor), not as an fsynced
// intent before it. A tool with any effect must not implement it.
type ReadOnly interface {
	Tool
	ReadOnly()
}

// ReadOnlyHinted is a tool that has no effects by someone else's word: an MCP
// server's readOnlyHint, from a server its owner trusts for it
// (mcp.servers.NAME.trust_read_only). It may join group:readonly in the
// policy, but keeps the audit of a tool with effects (intent first): a hint
// is not a reason to risk an effect unrecorded.
type ReadOnlyHinted interface {
	Tool
	ReadOnlyHint() bool
}

// WithoutEffects reports whether t has no effects: ReadOnly, or a
// ReadOnlyHinted whose hint holds. The policy's group:readonly is these.
func WithoutEffects(t Tool) bool {
	if _, ok := t.(ReadOnly); ok {
		return true
	}
	h, ok := t.(ReadOnlyHinted)
	return ok && h.ReadOnlyHint()
}
