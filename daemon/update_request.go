package daemon

// This file: an update asked for by message ("update URL" at a console, on
// Telegram, on the dashboard's chat) as calls on the call path: sys/update
// hands the URL to clawedge-init, which verifies, installs and tries it;
// sys/slots shows the A/B slots. Who may update the board is the
// authorizer's to decide (sys/update is tools.BoardOnly: a person at the
// board or an owner), and the audit records it like any call.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/update"
)

// registerUpdateTools adds sys/update and sys/slots to reg.
func (a *Core) registerUpdateTools() error {
	u := updateTool{}
	if os.Getenv("NOTIFY_SOCKET") == update.InitSocket { // not systemd's
		u.init = &notifier{addr: &net.UnixAddr{Name: update.InitSocket, Net: "unixgram"}}
	}
	return a.reg.Register(u, slotsTool{status: a.opt.UpdateStatus})
}

// updateTool hands an update's URL to clawedge-init.
type updateTool struct {
	init *notifier // init's notify socket; nil when not under clawedge-init
}

func (updateTool) BoardOnly() {}

func (updateTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "sys/update", Doc: "Install the signed update at url into the other slot and try it once (the SD image; only a person at the board or an owner).", Params: []grammar.ArgSpec{
		{Name: "url", Doc: "the update bundle's http(s) URL", Type: grammar.TypeString, Required: true, MaxLen: 2048},
	}}
}

func (t updateTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	url := a.String("url")
	if !isHTTP(url) {
		return tools.Result{}, fmt.Errorf("url %q: want an http(s) URL", url)
	}
	if t.init == nil {
		return tools.Result{}, errors.New("updates by message need the SD image (clawedge-init installs them); elsewhere run clawedge update URL as root")
	}
	if err := t.init.send(update.RequestKey + url); err != nil {
		return tools.Result{}, fmt.Errorf("cannot reach clawedge-init: %w", err)
	}
	return tools.Result{Text: "Update requested: the board downloads and verifies " + url + ", writes it to the other slot and reboots into it once; " +
		"it keeps it only if clawedge comes up healthy. Progress and errors are on the serial console."}, nil
}

func isHTTP(url string) bool {
	for _, scheme := range []string{"https://", "http://"} {
		if rest, ok := strings.CutPrefix(url, scheme); ok && rest != "" {
			return true
		}
	}
	return false
}

// slotsTool shows the A/B slots of the board clawedge runs on.
type slotsTool struct {
	status func() (string, error) // the update commands' reading; nil: none
}

func (slotsTool) ReadOnly() {}

func (slotsTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "sys/slots", Doc: "Show the board's A/B slots, their versions, the default and the last update attempt."}
}

func (t slotsTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	if t.status == nil {
		return tools.Result{Text: "This board has no A/B slots (they come with the SD image); updates: docs/update.md."}, nil
	}
	s, err := t.status()
	return tools.Result{Text: s}, err
}
