package channels

import (
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// The update words: "update URL" starts a signed A/B update (docs/update.md)
// and "update status" shows the slots. Each is a call on the call path
// (sys/update, sys/slots): the authorizer decides who may update the board
// (a person at the board or an owner: sys/update is tools.BoardOnly) and the
// audit records it.

// isUpdateURL says whether the rest of a line starting with "update" is one
// http(s) URL: only then is it the update word; "update me on the door" is
// text for the agent.
func isUpdateURL(rest string) bool {
	return !strings.ContainsAny(rest, " \t") && (strings.HasPrefix(rest, "https://") || strings.HasPrefix(rest, "http://"))
}

// updateCommand is the call an update word stands for.
func updateCommand(arg string) string {
	if strings.EqualFold(arg, "status") {
		return tools.CommandText("sys/slots", nil)
	}
	return tools.CommandText("sys/update", []grammar.Param{{Key: "url", Value: grammar.StringValue(arg)}})
}
