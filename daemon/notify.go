package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// chats delivers a text to a Telegram chat: the Telegram subsystem, while
// it runs.
type chats interface {
	Notify(ctx context.Context, chat int64, text string) error
}

// people is where the board tells its people something: the stdin console
// of a serving daemon (stdout), and Telegram's owners in their chats.
type people struct {
	stdout bool    // the daemon's console is on stdin/stdout
	owners []int64 // telegram.allow_users
	chats  chats   // nil: no Telegram
	log    *slog.Logger
}

// Owners tells the board's owners: the console and every Telegram owner,
// the way pin notifications go.
func (p *people) Owners(ctx context.Context, text string) {
	if p.stdout {
		fmt.Fprintln(os.Stdout, text)
	}
	if p.chats == nil {
		return
	}
	for _, u := range p.owners {
		p.send(ctx, u, text)
	}
}

// Principal tells one principal: a Telegram user in their own chat (what is
// theirs is not the other owners' to read), anyone else where the owners
// are told.
func (p *people) Principal(ctx context.Context, who tools.Principal, text string) {
	chat, isTelegram := telegramChat(who)
	if !isTelegram || p.chats == nil {
		p.Owners(ctx, text)
		return
	}
	p.send(ctx, chat, text)
}

func (p *people) send(ctx context.Context, chat int64, text string) {
	sctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := p.chats.Notify(sctx, chat, text); err != nil && ctx.Err() == nil {
		p.log.Warn("notify: not delivered", "user", chat, "err", err)
	}
}
