package setup

// This file: the steps the wizard's questions and the dashboard's setup page
// (page.go) share, each one function: the Telegram token tried with getMe,
// the owner learnt from their /start, the catalog models that fit this
// board, a remote model tried with a one-token request; and writeConfig
// (write.go), the one writer of the config.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/doctor"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// DefaultAPIURL is Telegram's Bot API.
const DefaultAPIURL = "https://api.telegram.org"

// checkToken asks Telegram who the token's bot is (getMe): a token it
// refuses is an error. The error never holds the token.
func checkToken(ctx context.Context, apiURL, token string) (*telegram.Client, string, error) {
	client := telegram.NewClient(cmp.Or(apiURL, DefaultAPIURL), token, telegram.ClientOptions{})
	client.Timeout = 15 * time.Second
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	bot, err := client.GetMe(ctx)
	if err != nil {
		return nil, "", errors.New(strings.ReplaceAll(err.Error(), token, "<token>"))
	}
	return client, bot.Username, nil
}

// awaitOwner waits until deadline for a /start sent to the bot in a private
// chat at since or later (one waiting from before may be anybody's), and
// returns its sender's id and name; 0 when none came.
func awaitOwner(ctx context.Context, client *telegram.Client, since, deadline time.Time) (int64, string, error) {
	var offset int64
	for time.Now().Before(deadline) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		raw, err := client.GetUpdates(cctx, offset, 10, min(10*time.Second, max(time.Until(deadline), 0)))
		cancel()
		if err != nil {
			return 0, "", fmt.Errorf("waiting for /start: %w", err)
		}
		for _, r := range raw {
			var u telegram.Update
			if err := json.Unmarshal(r, &u); err != nil {
				continue
			}
			offset = u.UpdateID + 1
			if m := u.Message; m != nil && m.From != nil && m.Chat.Type == "private" && m.Date >= since.Unix() && strings.HasPrefix(m.Text, "/start") {
				// Confirm the updates read, so that clawedge run does not
				// answer this /start again.
				cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				client.GetUpdates(cctx, offset, 1, 0)
				cancel()
				return m.From.ID, cmp.Or(m.From.Username, m.From.FirstName), nil
			}
		}
		if ctx.Err() != nil {
			return 0, "", ctx.Err()
		}
	}
	return 0, "", nil
}

// fitting are the catalog's models that fit in this board's available
// memory (the file and a quarter more for the KV cache and the runtime),
// and that memory (0: unknown, then all fit).
func fitting(meminfo string, catalog []modelfiles.Entry) ([]modelfiles.Entry, uint64) {
	avail, _ := localmodel.MemAvailable(meminfo)
	var fits []modelfiles.Entry
	for _, e := range catalog {
		if avail == 0 || uint64(e.Size)*5/4 < avail {
			fits = append(fits, e)
		}
	}
	return fits, avail
}

// tryRemote sends r the one-token request doctor sends; its Check says how it went.
func tryRemote(r setupRemote, key string) doctor.Check {
	return doctor.RemoteModel(r.config(key), doctor.RemoteTimeout)
}
