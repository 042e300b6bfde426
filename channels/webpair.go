package channels

// This file: the /web word. "/web [NAME] [viewer|operator|owner]" asks for a
// one-time code that pairs a browser with the dashboard (docs/web.md), for a
// person at the board: on the SD image the serial console is the only
// console, and it runs no shell where `clawedge web pair` could be typed.
// Telegram's owners have their own /web (channels/telegram), sent only in
// their private chat.

import (
	"errors"
	"strings"

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

// webPair answers /web: the code's line, for a person at the board only (a
// code makes a browser act on the board: no chat, program or browser may
// get one this way).
func (d *Dispatcher) webPair(msg Message, rest string) Response {
	if !tools.LocalChannel(msg.Channel) {
		return Response{Text: "error: only a person at the board's console may pair a browser here (a Telegram owner: /web in a private chat with the bot)", Failed: true}
	}
	name, role, err := WebPairArgs(rest)
	if err == nil {
		var line string
		if line, err = d.WebPair(name, role); err == nil {
			return Response{Text: line}
		}
	}
	return Response{Text: "error: " + err.Error(), Failed: true}
}
