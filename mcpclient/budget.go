package mcpclient

import (
	"fmt"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// CompileBudget bounds the automaton memory one server's tools may take, each
// compiled on its own as the model would be constrained to call it. A hostile
// or careless server's schemas (thousands of enum values, long bounded
// strings, deep nesting) could otherwise make every turn that offers its
// tools compile for seconds: past the budget, a tool degrades to one JSON
// parameter checked against its schema, with the reason in `mcp tools`.
const CompileBudget = 8 << 20

// compileBudget is what is left of CompileBudget while a server's list is read.
type compileBudget struct{ left int }

func newCompileBudget() *compileBudget { return &compileBudget{left: CompileBudget} }

// fit charges an exactly constrained tool's automaton to the budget, or
// degrades the tool when it does not fit (or does not compile).
func (b *compileBudget) fit(ft tools.FileTool) tools.FileTool {
	if ft.Degraded != "" || ft.Refused != "" {
		return ft
	}
	c, err := grammar.Compile(grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, MaxCalls: 1, Tools: []grammar.ToolSpec{ft.Spec}})
	switch {
	case err != nil:
		return ft.AsJSONParam(err.Error())
	case c.Size() > b.left:
		return ft.AsJSONParam(fmt.Sprintf("its constraint (%d KiB) is past what is left of the server's compile budget (%d KiB of %d MiB)",
			c.Size()>>10, b.left>>10, CompileBudget>>20))
	}
	b.left -= c.Size()
	return ft
}
