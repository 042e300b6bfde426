package channels

// This file: the console's memory words. "remember TEXT" saves the person's
// own words, "forget ID" forgets an entry, "forget" alone lists the newest
// with their ids. Each is the command it stands for, typed by the person:
// validated, decided by the policy and audited like any other.

import (
	"strconv"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// isMemoryWord says whether a line is one of the memory words, when the
// memory tools are there: "forget" takes an id or nothing, so "forget about
// it" still goes to the agent.
func (d *Dispatcher) isMemoryWord(word, rest string) bool {
	if d.Runner == nil || d.Runner.Registry == nil {
		return false
	}
	if _, err := d.Runner.Registry.Lookup("memory/save"); err != nil {
		return false
	}
	switch word {
	case "remember", "/remember":
		return rest != ""
	case "forget", "/forget":
		_, isID := memoryID(rest)
		return rest == "" || isID
	}
	return false
}

// memoryID reads "12" or "#12".
func memoryID(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "#"), 10, 32)
	return n, err == nil && n > 0
}

// memoryCommand is the command a memory word stands for, rendered by the one
// renderer so that any text is quoted as the command language wants.
func memoryCommand(word, rest string) string {
	switch strings.TrimPrefix(word, "/") {
	case "remember":
		return tools.CommandText("memory/save", []grammar.Param{{Key: "text", Value: grammar.StringValue(rest)}})
	}
	if id, ok := memoryID(rest); ok {
		return tools.CommandText("memory/forget", []grammar.Param{{Key: "id", Value: grammar.IntValue(id)}})
	}
	return tools.CommandText("memory/search", []grammar.Param{{Key: "n", Value: grammar.IntValue(10)}})
}
