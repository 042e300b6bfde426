package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/update"
)

// bootUpdate is the A/B updater of the board clawedge runs on, or nil when
// the kernel names no slot (any system but the A/B image: nothing to settle
// or commit).
func bootUpdate() *update.Updater {
	f := defaultUpdateFlags()
	cmdline, err := os.ReadFile(f.cmdline)
	if err != nil {
		return nil
	}
	if _, ok := update.RunningSlot(string(cmdline)); !ok {
		return nil
	}
	u, err := f.updater(nil, false)
	if err != nil {
		return nil
	}
	return u
}

// settleUpdate runs as clawedge starts: it ends an update attempt that
// failed (the old slot is running again; the message is for the console
// and the owners once ready) and, while a new slot is on trial, reboots if
// it is not healthy within update.HealthTimeout of the boot: a hang, or a
// crash loop the supervisor would restart forever, ends in the old slot.
// It returns the message to tell, if any.
func settleUpdate(ctx context.Context, u *update.Updater, log *slog.Logger, committed <-chan struct{}) (tell string) {
	if u == nil {
		return ""
	}
	var r update.Report
	err := withBootWritable(string(u.Boot.(update.DirFS)), func() (err error) { r, err = u.Settle(); return err })
	if err != nil {
		log.Warn("update: cannot settle the last attempt", "err", err)
		return ""
	}
	if r.Failed {
		log.Error(r.Message())
		return r.Message()
	}
	if r.Trying {
		log.Info(r.Message())
		left := update.HealthTimeout - uptime()
		go func() {
			t := time.NewTimer(max(left, 0))
			defer t.Stop()
			select {
			case <-committed:
			case <-ctx.Done():
			case <-t.C:
				log.Error("update: not healthy within the time allowed; rebooting into the previous slot", "timeout", update.HealthTimeout)
				if err := rebootWithArg(""); err != nil {
					log.Error("update: reboot", "err", err)
				}
			}
		}()
	}
	return ""
}

// commitUpdate keeps the running slot once clawedge is ready (config
// loaded, store and board open, channels up).
func commitUpdate(u *update.Updater, log *slog.Logger) {
	if u == nil {
		return
	}
	var ok bool
	err := withBootWritable(string(u.Boot.(update.DirFS)), func() (err error) { ok, err = u.Commit(); return err })
	switch {
	case err != nil:
		log.Error("update: cannot commit the running slot; the next boot is the previous one", "err", err)
	case ok:
		log.Info("update committed: slot "+strings.ToUpper(u.Current)+" is now the default", "version", version)
	}
}

// uptime is the time since boot: a tried slot's trial starts at its boot,
// and the wall clock of a board with no battery clock cannot be trusted.
func uptime() time.Duration {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) != nil {
		return 0
	}
	return time.Duration(si.Uptime) * time.Second
}
