package doctor

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/config"
)

// Telegram is doctor's line for Telegram: the token's shape, then getMe. Neither
// the token nor any part of it is ever printed.
func Telegram(cfg *config.Config) Check {
	tc := cfg.Telegram
	c := Check{What: "telegram"}
	const fromFather = "copy the token from @BotFather into TELEGRAM_TOKEN (telegram.token: ${TELEGRAM_TOKEN})"
	if err := telegram.CheckToken(tc.Token.Reveal()); err != nil {
		c.Info, c.Fix = err.Error(), fromFather
		return c
	}
	if err := telegram.TokenShape(tc.Token.Reveal()); err != nil {
		// Not asked online: Telegram would only refuse it. A warning, since the format
		// is not promised anywhere.
		c.OK, c.Warn, c.Info, c.Fix = true, true, err.Error()+"; not checked with Telegram", fromFather
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := telegram.NewClient(tc.APIURL, tc.Token.Reveal(), telegram.ClientOptions{})
	client.Timeout = 10 * time.Second
	bot, err := client.GetMe(ctx)
	switch {
	case errors.Is(err, telegram.ErrUnauthorized):
		c.Info, c.Fix = "Telegram refused the token ("+err.Error()+")", "the token was revoked or mistyped: get the current one from @BotFather (/token)"
		return c
	case err != nil:
		// Offline is a state a board may be in; the daemon retries by itself.
		c.OK, c.Warn = true, true
		c.Info, c.Fix = "cannot reach "+tc.APIURL+" now: "+err.Error(), "check the network and telegram.api_url; clawedge run keeps retrying by itself"
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
		c.Info = strings.Join(facts, ", ")
		c.Fix = "nobody may use the bot: list your numeric Telegram id under telegram.allow_users, or set pairing: true"
		return c
	}
	c.OK, c.Info = true, strings.Join(facts, ", ")
	return c
}
