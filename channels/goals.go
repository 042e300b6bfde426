package channels

// This file: the goal words. "/goal TEXT" sets a goal, "/goal" or "/goals"
// lists them, "/goal show ID", "/goal cancel ID" and "/goal answer ID TEXT"
// act on one. Each is the goal/* command it stands for, typed by the person:
// validated, decided by the policy and audited like any other.

import (
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// isGoalWord says whether a line is a goal word, when the goal tools are there.
func (d *Dispatcher) isGoalWord(word string) bool {
	if word != "/goal" && word != "/goals" || d.Runner == nil || d.Runner.Registry == nil {
		return false
	}
	_, err := d.Runner.Registry.Lookup("goal/add")
	return err == nil
}

// goalCommand is the command a goal word stands for, rendered by the one
// renderer so that any text is quoted as the command language wants.
func goalCommand(word, rest string) string {
	str := func(k, v string) grammar.Param { return grammar.Param{Key: k, Value: grammar.StringValue(v)} }
	sub, arg, _ := strings.Cut(rest, " ")
	arg = strings.TrimSpace(arg)
	switch {
	case word == "/goals" || rest == "" || rest == "list":
		return tools.CommandText("goal/list", nil)
	case (sub == "show" || sub == "cancel") && arg != "" && !strings.Contains(arg, " "):
		return tools.CommandText("goal/"+sub, []grammar.Param{str("id", arg)})
	case sub == "answer" && strings.Contains(arg, " "):
		id, text, _ := strings.Cut(arg, " ")
		return tools.CommandText("goal/answer", []grammar.Param{str("id", id), str("text", strings.TrimSpace(text))})
	}
	return tools.CommandText("goal/add", []grammar.Param{str("objective", rest)})
}
