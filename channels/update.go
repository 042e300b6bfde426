package channels

import (
	"context"
	"strings"
)

// UpdateRequester starts a signed A/B update (docs/update.md) for a person
// who typed "update URL". It decides who may (a console, an owner) and
// returns the reply. It is a console word, not a tool: a model never
// proposes an update.
type UpdateRequester interface {
	RequestUpdate(ctx context.Context, msg Message, url string) (string, error)
	// UpdateStatus answers "update status": both slots and the last attempt.
	UpdateStatus() (string, error)
}

// isUpdateURL says whether the rest of a line starting with "update" is one
// http(s) URL: only then is it the update word; "update me on the door" is
// text for the agent.
func isUpdateURL(rest string) bool {
	return !strings.ContainsAny(rest, " \t") && (strings.HasPrefix(rest, "https://") || strings.HasPrefix(rest, "http://"))
}

// update answers "update URL" and "update status".
func (d *Dispatcher) update(ctx context.Context, msg Message, arg string) Response {
	var reply string
	var err error
	if strings.EqualFold(arg, "status") {
		reply, err = d.Update.UpdateStatus()
	} else {
		reply, err = d.Update.RequestUpdate(ctx, msg, arg)
	}
	if err != nil {
		return Response{Text: "error: " + err.Error(), Failed: true}
	}
	return Response{Text: reply}
}
