package daemon

// This file: the first pairing with no terminal (docs/image.md). On the SD
// image, while no browser is paired with the dashboard, the daemon issues a
// code for an owner's browser, web:phone, through web/pair on the call path
// as the person at the board's console (decided and audited like any code;
// the audit keeps only that one was issued), shows it on the serial console
// and hands it to clawedge-init, which writes it to the boot partition as
// clawedge-pairing.txt: whoever holds the card reads it there. The code is
// valid for a day and kept across restarts (web.Sessions.PairFor), since
// reading the card means powering the board off; when it expires unused, a
// new one replaces it; once a browser is paired, the file is removed.

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/update"
)

// PairingSink is where the first pairing code goes besides the console:
// clawedge-init's boot partition on the SD image.
type PairingSink interface {
	// Show puts code, valid until expires, where the card's holder reads it.
	Show(code string, expires time.Time) error
	// Clear removes it: a browser is paired.
	Clear() error
}

// The first code: an owner's browser named phone, valid for a day.
const (
	firstName    = "phone"
	firstMinutes = 24 * 60
	firstPoll    = 2 * time.Second // how often a pairing is looked for
)

// initPairing hands the code to clawedge-init over its notify socket.
type initPairing struct{ n *notifier }

func (p initPairing) Show(code string, expires time.Time) error {
	return p.n.send(update.PairingKey + code + " " + expires.UTC().Format(time.RFC3339))
}

func (p initPairing) Clear() error { return p.n.send(update.PairingKey) }

// pairingSink is opt's sink, or on the SD image clawedge-init's; nil: none.
func pairingSink(opt Options) PairingSink {
	if opt.FirstPairing != nil {
		return opt.FirstPairing
	}
	if os.Getenv("NOTIFY_SOCKET") == update.InitSocket {
		return initPairing{&notifier{addr: &net.UnixAddr{Name: update.InitSocket, Net: "unixgram"}}}
	}
	return nil
}

// consoleCaller is the person at the board's serial console.
var consoleCaller = tools.Caller{Channel: "console/first-boot", User: "console", Actor: tools.Person}

// startFirstPairing runs the first pairing until a browser is paired or ctx ends.
func (a *Core) startFirstPairing(ctx context.Context, wg *sync.WaitGroup, console io.Writer) {
	if a.pairSink == nil || a.webSessions == nil {
		return
	}
	wg.Go(func() { a.firstPairing(ctx, a.pairSink, console, firstPoll) })
}

func (a *Core) firstPairing(ctx context.Context, sink PairingSink, console io.Writer, poll time.Duration) {
	shown := ""
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		if len(a.webSessions.List()) > 0 {
			if err := sink.Clear(); err != nil {
				a.log.Warn("web: the first pairing code stays on the boot partition", "err", err)
			}
			return
		}
		code, _, expires, ok := a.webSessions.Kept(firstName)
		if !ok {
			var err error
			if code, expires, err = a.issueFirst(ctx); err != nil {
				a.log.Warn("web: no first pairing code", "err", err)
			}
		}
		if code != "" && code != shown {
			if err := sink.Show(code, expires); err != nil {
				a.log.Warn("web: the first pairing code is not on the boot partition", "err", err)
			}
			// The console, not the log: the code is for the person there.
			fmt.Fprintf(console, "\nclawedge: pair a phone with the dashboard (web: %s): code %s, valid until %s UTC; also on the SD card's boot partition, clawedge-pairing.txt\n\n",
				a.cfg.Web.Listen, code, expires.UTC().Format("2006-01-02 15:04"))
			shown = code
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// issueFirst asks web/pair for the first code, as the person at the console.
func (a *Core) issueFirst(ctx context.Context) (string, time.Time, error) {
	args := fmt.Sprintf(`{"name":%q,"role":"owner","minutes":%d}`, firstName, firstMinutes)
	call, err := a.runner.Prepare("web/pair", []byte(args))
	if err != nil {
		return "", time.Time{}, err
	}
	rep := a.runner.Call(ctx, consoleCaller, call)
	if rep.Err != nil {
		return "", time.Time{}, rep.Err
	}
	exp, err := time.Parse(time.RFC3339, rep.Result.Fields["expires"].Str)
	return rep.Result.Fields["code"].Str, exp, err
}
