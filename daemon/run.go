package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/sandbox"
)

// storeCheckEvery is how often the daemon checks, between writes, that its store
// file is still the one it opened.
const storeCheckEvery = 10 * time.Second

// watchStore stops the daemon with the store's error when its file is removed or
// replaced (noticed by a write, or by the periodic check): writing on would put
// the audit trail into a file nobody reads. Between writes it also writes the
// outcomes that waited for disk space.
func (a *Core) watchStore(ctx context.Context, stop func(error)) {
	t := time.NewTicker(storeCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case err := <-a.lost:
			stop(err)
			return
		case <-t.C:
			if a.store.CheckFile() == nil { // else it tells a.lost
				a.store.FlushLate() // outcomes kept while the disk was full
			}
		}
	}
}

// StdinConsole is the console on this process's stdin; it prompts only when a
// person is typing, so piped input gives clean output.
func StdinConsole(h channels.Handler) *channels.Console {
	c := &channels.Console{Handler: h, Channel: "console/stdin", User: cmp.Or(os.Getenv("USER"), "console")}
	if termsafe.IsTTY(os.Stdin) { // not /dev/null, systemd's stdin
		c.Prompt = "> "
	}
	return c
}

// refuseConfined refuses a control socket peer that runs inside a sandboxed
// run (its own PID namespace): a sys/exec child under the daemon's uid must
// not be able to send commands, or approve calls, as the daemon's user.
func refuseConfined(pid int32, uid uint32) error {
	if self := os.Geteuid(); uid != 0 && int(uid) != self {
		return fmt.Errorf("uid %d is neither the daemon's user (%d) nor root", uid, self)
	}
	if sandbox.Confined(int(pid)) {
		return errors.New("the peer runs inside a sandbox (another PID or user namespace); sandboxed programs may not use the daemon")
	}
	return nil
}
