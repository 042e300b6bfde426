package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/clawedge/clawedge/internal/termsafe"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/hal"
)

// serveTelegram starts the Telegram channel, and the pin-edge notifications, when a
// token is configured; it reports whether it did. A token Telegram refuses stops the
// daemon through stop: running on, deaf to the phone, would look like a working bot.
func (a *app) serveTelegram(ctx context.Context, d *channels.Dispatcher, wg *sync.WaitGroup, stop context.CancelCauseFunc) (bool, error) {
	tc := a.cfg.Telegram
	if tc.Token.Reveal() == "" {
		return false, nil
	}
	if err := telegram.CheckToken(tc.Token.Reveal()); err != nil {
		return false, err
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
		WebPair:    a.webPair(),
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
		return false, err
	}
	a.tg = ch // automation notify (automations.go)
	events, err := a.telegramEvents(tc)
	if err != nil {
		return false, err
	}
	wg.Go(func() {
		if err := ch.Run(ctx); err != nil {
			a.log.Error("telegram channel stopped", "err", err)
			stop(err)
		}
	})
	if len(events) > 0 {
		n := &telegram.Notifier{Sender: ch, Events: events, Log: a.log}
		wg.Go(func() { n.Run(ctx) })
	}
	return true, nil
}

// telegramEvents maps telegram.notify onto the board's pins.
func (a *app) telegramEvents(tc config.Telegram) ([]telegram.Event, error) {
	var out []telegram.Event
	for _, n := range tc.Notify {
		pin, err := a.board.Pin(n.Pin)
		if err != nil {
			return nil, fmt.Errorf("telegram.notify: %w", err)
		}
		edge := hal.Edge(or(n.Edge, string(pin.Config().Edge)))
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

// telegramCheck is doctor's line for Telegram: the token's shape, then getMe. Neither
// the token nor any part of it is ever printed.
func telegramCheck(cfg *config.Config) check {
	tc := cfg.Telegram
	c := check{what: "telegram"}
	const fromFather = "copy the token from @BotFather into TELEGRAM_TOKEN (telegram.token: ${TELEGRAM_TOKEN})"
	if err := telegram.CheckToken(tc.Token.Reveal()); err != nil {
		c.info, c.fix = err.Error(), fromFather
		return c
	}
	if err := telegram.TokenShape(tc.Token.Reveal()); err != nil {
		// Not asked online: Telegram would only refuse it. A warning, since the format
		// is not promised anywhere.
		c.ok, c.warn, c.info, c.fix = true, true, err.Error()+"; not checked with Telegram", fromFather
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := telegram.NewClient(tc.APIURL, tc.Token.Reveal(), telegram.ClientOptions{})
	client.Timeout = 10 * time.Second
	bot, err := client.GetMe(ctx)
	switch {
	case errors.Is(err, telegram.ErrUnauthorized):
		c.info, c.fix = "Telegram refused the token ("+err.Error()+")", "the token was revoked or mistyped: get the current one from @BotFather (/token)"
		return c
	case err != nil:
		// Offline is a state a board may be in; the daemon retries by itself.
		c.ok, c.warn = true, true
		c.info, c.fix = "cannot reach "+tc.APIURL+" now: "+err.Error(), "check the network and telegram.api_url; clawedge run keeps retrying by itself"
		return c
	}
	var facts []string
	facts = append(facts, fmt.Sprintf("bot @%s reachable at %s", bot.Username, tc.APIURL))
	facts = append(facts, fmt.Sprintf("%d allowed user(s)", len(tc.AllowUsers)))
	if tc.Pairing {
		facts = append(facts, "pairing on")
	}
	if n := len(tc.AllowChats); n > 0 {
		facts = append(facts, fmt.Sprintf("%d group(s)", n))
	}
	if n := len(tc.Notify); n > 0 {
		facts = append(facts, fmt.Sprintf("%d pin notification(s)", n))
	}
	if len(tc.AllowUsers) == 0 && !tc.Pairing {
		c.info = strings.Join(facts, ", ")
		c.fix = "nobody may use the bot: list your numeric Telegram id under telegram.allow_users, or set pairing: true"
		return c
	}
	c.ok, c.info = true, strings.Join(facts, ", ")
	return c
}
