package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/update"
)

// updateRequester takes "update URL" from a console (a person at the board)
// or an owner (policy.owners) elsewhere, audits it, and hands it to init.
type updateRequester struct {
	owners []string
	init   *notifier // init's notify socket; nil when not under clawedge-init
	store  *store.Store
	flags  *updateFlags // where the slots are; nil: the SD image's layout
}

func newUpdateRequester(a *app) *updateRequester {
	u := &updateRequester{owners: a.cfg.Policy.Owners, store: a.store}
	if os.Getenv("NOTIFY_SOCKET") == update.InitSocket { // not systemd's
		u.init = &notifier{addr: &net.UnixAddr{Name: update.InitSocket, Net: "unixgram"}}
	}
	return u
}

// UpdateStatus shows the slots of the board clawedge runs on, read from the
// boot partition (readable by the unprivileged daemon).
func (u *updateRequester) UpdateStatus() (string, error) {
	f := defaultUpdateFlags()
	if u.flags != nil {
		f = *u.flags
	}
	up, err := f.updater(nil, false)
	if err != nil {
		return "", err
	}
	if up.Current == "" {
		return "This board has no A/B slots (they come with the SD image); updates: docs/update.md.", nil
	}
	var b strings.Builder
	err = writeUpdateStatus(&b, up)
	return strings.TrimRight(b.String(), "\n"), err
}

func (u *updateRequester) RequestUpdate(ctx context.Context, msg channels.Message, url string) (string, error) {
	id := tools.UserID(msg.User)
	if !strings.HasPrefix(msg.Channel, "console") && !slices.Contains(u.owners, id) {
		return "", fmt.Errorf("only an owner (policy.owners) or a person at the console may update the board; %s is not one", id)
	}
	if u.init == nil {
		return "", errors.New("updates by message need the SD image (clawedge-init installs them); elsewhere run clawedge update URL as root")
	}
	var audit uint64
	if u.store != nil {
		var err error
		if audit, err = u.store.Intent(msg.User, msg.Channel, "update "+url); err != nil {
			return "", err
		}
	}
	err := u.init.send(update.RequestKey + url)
	if u.store != nil {
		detail := "handed to clawedge-init"
		if err != nil {
			detail = err.Error()
		}
		u.store.Outcome(audit, err == nil, detail)
	}
	if err != nil {
		return "", fmt.Errorf("cannot reach clawedge-init: %w", err)
	}
	return "Update requested: the board downloads and verifies " + url + ", writes it to the other slot and reboots into it once; " +
		"it keeps it only if clawedge comes up healthy. Progress and errors are on the serial console.", nil
}
