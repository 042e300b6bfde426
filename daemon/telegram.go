package daemon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawedge/clawedge/internal/termsafe"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/hal"
)

// telegramDoor is the Telegram subsystem; while it runs it delivers the
// texts automations and goals send to a chat.
type telegramDoor struct {
	*task
	ch atomic.Pointer[telegram.Channel]
}

// Notify sends text to chat, when the channel runs.
func (t *telegramDoor) Notify(ctx context.Context, chat int64, text string) error {
	ch := t.ch.Load()
	if ch == nil {
		return errors.New("telegram is not running")
	}
	return ch.Notify(ctx, chat, text)
}

// serveTelegram starts the Telegram channel, and the pin-edge notifications. A token Telegram refuses stops the
// daemon through fail: running on, deaf to the phone, would look like a working bot.
func (a *Core) serveTelegram(ctx context.Context, d *channels.Dispatcher, wg *sync.WaitGroup, fail func(error), door *telegramDoor) error {
	tc := a.cfg.Telegram
	if err := telegram.CheckToken(tc.Token.Reveal()); err != nil {
		return err
	}
	if err := telegram.TokenShape(tc.Token.Reveal()); err != nil {
		a.log.Warn("telegram: "+err.Error()+"; trying it anyway", "api_url", tc.APIURL)
	}
	ch, err := telegram.New(telegram.Config{
		Client:     telegram.NewClient(tc.APIURL, tc.Token.Reveal(), telegram.ClientOptions{}),
		Store:      a.store,
		Dispatcher: d,
		AllowUsers: tc.AllowUsers,
		AllowChats: tc.AllowChats,
		Pairing:    tc.Pairing,
		Log:        a.log,
		// The buttons live as long as the agent waits for them.
		ApprovalTimeout: time.Duration(a.cfg.Policy.ApprovalTimeout),
		OnPairingRequest: func(r telegram.PairingRequest) {
			// The owner is at the console; the log has it too.
			if a.cfg.ConsoleStdin() {
				fmt.Fprintln(os.Stdout, termsafe.String(r.String())) // the user's name is theirs to choose
			}
		},
		OnPairingNotice: func(line string) {
			if a.cfg.ConsoleStdin() {
				fmt.Fprintln(os.Stdout, termsafe.String(line))
			}
		},
	})
	if err != nil {
		return err
	}
	events, err := a.telegramEvents(tc)
	if err != nil {
		return err
	}
	door.ch.Store(ch) // the chats automations and goals tell
	wg.Go(func() {
		if err := ch.Run(ctx); err != nil {
			a.log.Error("telegram channel stopped", "err", err)
			fail(err)
		}
		door.ch.Store(nil)
	})
	if len(events) > 0 {
		n := &telegram.Notifier{Sender: ch, Events: events, Log: a.log}
		wg.Go(func() { n.Run(ctx) })
	}
	return nil
}

// telegramEvents maps telegram.notify onto the board's pins.
func (a *Core) telegramEvents(tc config.Telegram) ([]telegram.Event, error) {
	var out []telegram.Event
	for _, n := range tc.Notify {
		pin, err := a.board.Pin(n.Pin)
		if err != nil {
			return nil, fmt.Errorf("telegram.notify: %w", err)
		}
		edge := hal.Edge(cmp.Or(n.Edge, string(pin.Config().Edge)))
		users := n.Users
		if len(users) == 0 {
			users = tc.AllowUsers
		}
		out = append(out, telegram.Event{
			Name:  n.Pin,
			Users: users,
			Text:  n.Text,
			Wait: func(ctx context.Context) (bool, error) {
				l, err := pin.WaitForEdge(ctx, edge)
				return l == hal.High, err
			},
		})
	}
	return out, nil
}
