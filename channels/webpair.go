package channels

// This file: the /web word. "/web [NAME] [viewer|operator|owner]" asks for a
// one-time code that pairs a browser with the dashboard (docs/web.md), for a
// person at the board: on the SD image the serial console is the only
// console, and it runs no shell where `clawedge web pair` could be typed.
// Telegram's owners send it in their private chat (channels/telegram).

import (
	"context"
	"errors"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// WebPairUsage is how the /web word is written, on a console and on Telegram.
const WebPairUsage = "/web [NAME] [viewer|operator|owner]"

// WebPairArgs reads the words after /web: the browser's name (default
// "browser") and its role (default "operator").
func WebPairArgs(rest string) (name, role string, err error) {
	name, role = "browser", "operator"
	f := strings.Fields(rest)
	if len(f) > 2 {
		return "", "", errors.New("usage: " + WebPairUsage)
	}
	if len(f) > 0 {
		name = f[0]
	}
	if len(f) > 1 {
		role = f[1]
	}
	return name, role, nil
}

// webPair answers /web: web/pair on the call path, as the sender. Who may
// have a code (a person at the board, an owner) is the authorizer's to
// decide: a code makes a browser act on the board.
func (d *Dispatcher) webPair(ctx context.Context, msg Message, rest string) Response {
	if !d.has("web/pair") {
		return Response{Text: "error: the dashboard is off: the config has no web: section", Failed: true}
	}
	name, role, err := WebPairArgs(rest)
	if err != nil {
		return Response{Text: "error: " + err.Error(), Failed: true}
	}
	return d.command(ctx, msg, tools.CommandText("web/pair", []grammar.Param{
		{Key: "name", Value: grammar.StringValue(name)}, {Key: "role", Value: grammar.StringValue(role)}}))
}
