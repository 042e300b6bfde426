package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// ChannelName is the channel every Telegram call is audited under.
const ChannelName = "telegram"

// QueueName is the store queue (durable inbox) of the channel.
const QueueName = "telegram"

// Config is what a Channel needs. Client, Store and Dispatcher are required.
type Config struct {
	Client     *Client
	Store      *store.Store
	Dispatcher *channels.Dispatcher
	AllowUsers []int64 // owners: may talk, and may decide any approval
	AllowChats []int64 // group chats where mentions and replies count
	Pairing    bool
	Log        *slog.Logger

	// PollTimeout is getUpdates' long-poll time; default 30 s.
	PollTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait after a network error or a 5xx; each
	// failure doubles it. Defaults 1 s and 60 s.
	MinBackoff, MaxBackoff time.Duration
	// ApprovalTimeout is how long approval buttons stay live; default 5 minutes.
	ApprovalTimeout time.Duration
	// OnPairingRequest shows a new pairing code to the owner (the console). It is also
	// logged at warn level either way.
	OnPairingRequest func(PairingRequest)
	// OnPairingNotice shows the owner a line when pairing limits start a cooldown (a
	// user sent too many wrong codes, or too many codes were asked for): one line per
	// cooldown, never one per refused attempt. Also logged at warn level.
	OnPairingNotice func(line string)
	// Now is the clock; tests set it.
	Now func() time.Time
}

// Channel is the Telegram channel. Run it once.
type Channel struct {
	cfg       Config
	log       *slog.Logger
	client    *Client
	st        *store.Store
	access    *access
	approvals *approvals
	now       func() time.Time

	bot  User
	wake chan struct{}
	wg   sync.WaitGroup // callback handling, typing
}

// New checks cfg and loads the paired users. It makes no network call.
func New(cfg Config) (*Channel, error) {
	if cfg.Client == nil || cfg.Store == nil || cfg.Dispatcher == nil || cfg.Dispatcher.Runner == nil {
		return nil, errors.New("telegram: Client, Store and Dispatcher (with a Runner) are required")
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PollTimeout <= 0 {
		cfg.PollTimeout = 30 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(60*time.Second, cfg.MinBackoff)
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = 5 * time.Minute
	}
	acc, err := newAccess(cfg.Store, cfg.AllowUsers, cfg.AllowChats, cfg.Now)
	if err != nil {
		return nil, err
	}
	c := &Channel{cfg: cfg, log: cfg.Log.With("channel", ChannelName), client: cfg.Client, st: cfg.Store,
		access: acc, now: cfg.Now, wake: make(chan struct{}, 1)}
	c.approvals = newApprovals(c)
	return c, nil
}

// Bot is the bot's own user, known once Run has reached Telegram.
func (c *Channel) Bot() User { return c.bot }

// Run serves until ctx ends (then it returns nil) or the token is refused (then it
// returns an error matching ErrUnauthorized, which names no token).
func (c *Channel) Run(ctx context.Context) error {
	defer c.wg.Wait()
	bot, err := c.getMe(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	c.bot = bot
	c.log.Info("telegram connected", "bot", "@"+bot.Username, "owners", len(c.cfg.AllowUsers),
		"paired", len(c.access.Paired()), "groups", len(c.cfg.AllowChats), "pairing", c.cfg.Pairing)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { c.work(ctx) })
	err = c.poll(ctx)
	cancel()
	wg.Wait()
	return err
}

// getMe learns the bot's name (for mentions in groups), retrying while the network is down.
func (c *Channel) getMe(ctx context.Context) (User, error) {
	b := c.newBackoff()
	for {
		u, err := c.client.GetMe(ctx)
		if err == nil {
			return u, nil
		}
		if fatal := c.fatal(err); fatal != nil {
			return User{}, fatal
		}
		if !b.wait(ctx, err, "getMe") {
			return User{}, ctx.Err()
		}
	}
}

func (c *Channel) fatal(err error) error {
	if errors.Is(err, ErrUnauthorized) {
		return fmt.Errorf("telegram: the bot token was refused (%v): check telegram.token (from @BotFather) and telegram.api_url; %w", err, ErrUnauthorized)
	}
	return nil
}

// backoff paces retries: Telegram's retry_after when it gives one, else doubling from
// MinBackoff to MaxBackoff. It logs the first failure of a streak and every tenth.
type backoff struct {
	c        *Channel
	next     time.Duration
	failures int
}

func (c *Channel) newBackoff() *backoff { return &backoff{c: c, next: c.cfg.MinBackoff} }

func (b *backoff) wait(ctx context.Context, err error, what string) bool {
	b.failures++
	d := b.next
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		d = ae.RetryAfter
	} else {
		b.next = min(b.next*2, b.c.cfg.MaxBackoff)
	}
	if b.failures == 1 || b.failures%10 == 0 {
		b.c.log.Warn("telegram unreachable, retrying", "call", what, "err", err, "in", d, "failures", b.failures)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (b *backoff) reset() {
	if b.failures > 0 {
		b.c.log.Info("telegram reachable again", "after_failures", b.failures)
	}
	b.failures, b.next = 0, b.c.cfg.MinBackoff
}

// poll is the receiving half: getUpdates, admit, store with the offset, wake the worker.
func (c *Channel) poll(ctx context.Context) error {
	off, _, err := c.st.QueueOffset(QueueName)
	if err != nil {
		return err
	}
	offset := int64(off)
	b := c.newBackoff()
	for ctx.Err() == nil {
		raws, err := c.client.GetUpdates(ctx, offset, 100, c.cfg.PollTimeout)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if fatal := c.fatal(err); fatal != nil {
				return fatal
			}
			b.wait(ctx, err, "getUpdates")
			continue
		}
		b.reset()
		updatesReceived.Add(len(raws)) // metrics.go
		if len(raws) == 0 {
			continue
		}
		items, callbacks, next := c.admit(raws, offset)
		if next == offset {
			// Nothing in the batch could be moved past: it will come again as it is.
			b.wait(ctx, errors.New("a batch of updates without usable update_id"), "getUpdates")
			continue
		}
		// The acknowledgement to Telegram is the next getUpdates with the new offset, and
		// it is only sent after this commit: a crash before it means redelivery, which the
		// store's seen set drops if the batch was in fact committed.
		if _, err := c.st.Enqueue(QueueName, uint64(next), items); err != nil {
			c.log.Error("telegram: cannot store updates; they stay unconfirmed and will come again", "err", err)
			b.wait(ctx, err, "store")
			continue
		}
		offset = next
		select {
		case c.wake <- struct{}{}:
		default:
		}
		for _, cq := range callbacks {
			c.wg.Go(func() { c.approvals.handle(ctx, cq) })
		}
	}
	return nil
}

// admit decides, for each update of a batch, whether it is queued, handled at once (a
// button press), or dropped; and computes the next offset.
func (c *Channel) admit(raws []json.RawMessage, offset int64) (items []store.NewQueueItem, callbacks []*CallbackQuery, next int64) {
	next = offset
	for _, raw := range raws {
		var head struct {
			UpdateID *int64 `json:"update_id"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.UpdateID == nil {
			c.log.Warn("telegram: skipping an update without an update_id", "err", err, "bytes", len(raw))
			continue
		}
		id := *head.UpdateID
		// Not max(next, id+1): after a quiet week Telegram may restart ids lower.
		if id+1 > next || next == offset {
			next = id + 1
		}
		var u Update
		if err := json.Unmarshal(raw, &u); err != nil {
			c.log.Warn("telegram: skipping a malformed update", "update_id", id, "err", err)
			continue
		}
		switch {
		case u.CallbackQuery != nil:
			if c.wantedPress(u.CallbackQuery) {
				callbacks = append(callbacks, u.CallbackQuery)
			}
		case u.EditedMessage != nil:
			// Running an edited command again would do it twice; a fresh message is needed.
			c.log.Debug("telegram: ignoring an edited message", "update_id", id)
		case u.Message != nil:
			if !c.wanted(u.Message) {
				continue
			}
			if len(raw) > store.MaxQueueData {
				c.log.Warn("telegram: skipping an oversized update", "update_id", id, "bytes", len(raw))
				continue
			}
			items = append(items, store.NewQueueItem{ID: uint64(id), Data: raw})
		}
	}
	return items, callbacks, next
}

// wanted is the deny-by-default gate: only messages from allowed people (or a pairing
// request, when pairing is on) get past it. Nothing is sent for the others.
func (c *Channel) wanted(m *Message) bool {
	if m.From == nil || m.From.IsBot {
		return false
	}
	switch m.Chat.Type {
	case "private":
		if c.access.userAllowed(m.From.ID) {
			return true
		}
		if c.cfg.Pairing {
			cmd, _, _ := c.command(m)
			return cmd == "/pair"
		}
		return false
	case "group", "supergroup":
		return c.access.chatAllowed(m.Chat.ID) && c.addressed(m)
	}
	return false
}

// wantedPress is wanted for a button press: only people who may talk to the bot (or
// members of an allowed group, pressing under a message there) get it answered. A
// stranger's press, or one without "from", is dropped with no outbound call: even
// "expired" would tell them the bot exists.
func (c *Channel) wantedPress(cq *CallbackQuery) bool {
	if cq.From.ID == 0 || cq.From.IsBot {
		return false
	}
	return c.access.userAllowed(cq.From.ID) || (cq.Message != nil && c.access.chatAllowed(cq.Message.Chat.ID))
}

// addressed: in a group, a message counts when it mentions the bot, replies to one of
// its messages, or is a /command@thisbot.
func (c *Channel) addressed(m *Message) bool {
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == c.bot.ID {
		return true
	}
	for _, e := range m.Entities {
		switch e.Type {
		case "mention":
			if strings.EqualFold(entityText(m.Text, e), "@"+c.bot.Username) {
				return true
			}
		case "text_mention":
			if e.User != nil && e.User.ID == c.bot.ID {
				return true
			}
		case "bot_command":
			if _, to, ok := strings.Cut(entityText(m.Text, e), "@"); ok && strings.EqualFold(to, c.bot.Username) {
				return true
			}
		}
	}
	return false
}

// entityText cuts an entity out of text; offsets are UTF-16 code units.
func entityText(text string, e Entity) string {
	u := utf16.Encode([]rune(text))
	if e.Offset < 0 || e.Length < 0 || e.Offset+e.Length > len(u) {
		return ""
	}
	return string(utf16.Decode(u[e.Offset : e.Offset+e.Length]))
}

// command returns a leading /command (lower case, without @bot), the rest of the text,
// and whether the command is addressed to another bot.
func (c *Channel) command(m *Message) (cmd, rest string, otherBot bool) {
	text := strings.TrimSpace(m.Text)
	if !strings.HasPrefix(text, "/") {
		return "", text, false
	}
	word, rest, _ := strings.Cut(text, " ")
	word, to, hasTo := strings.Cut(word, "@")
	if hasTo && c.bot.Username != "" && !strings.EqualFold(to, c.bot.Username) {
		return "", "", true
	}
	return strings.ToLower(word), strings.TrimSpace(rest), false
}

// stripMention removes "@bot" from a group message's text.
func (c *Channel) stripMention(text string) string {
	if c.bot.Username == "" {
		return text
	}
	lower := strings.ToLower(text)
	at := "@" + strings.ToLower(c.bot.Username)
	for {
		i := strings.Index(lower, at)
		if i < 0 {
			return strings.TrimSpace(text)
		}
		text = text[:i] + text[i+len(at):]
		lower = lower[:i] + lower[i+len(at):]
	}
}

// work processes the inbox in order, one item at a time, so that one person's commands
// run in the order sent.
func (c *Channel) work(ctx context.Context) {
	b := c.newBackoff()
	for ctx.Err() == nil {
		items, err := c.st.QueueItems(QueueName, 32)
		if err != nil {
			c.log.Error("telegram: reading the inbox", "err", err)
			b.wait(ctx, err, "store")
			continue
		}
		if len(items) == 0 {
			select {
			case <-c.wake:
			case <-ctx.Done():
			}
			continue
		}
		for _, it := range items {
			if ctx.Err() != nil {
				return
			}
			if err := c.process(ctx, it); err != nil {
				if ctx.Err() == nil {
					c.log.Error("telegram: processing an update", "update_id", it.ID, "err", err)
					b.wait(ctx, err, "store")
				}
				break
			}
			b.reset()
		}
	}
}

// Origin is who a message came from and where: its reply goes there, and so does an
// approval asked during its handling (the message's asker holds it).
type Origin struct {
	ChatID    int64
	UserID    int64
	MessageID int64
	Username  string
	Group     bool
}

// originOf is where m came from.
func originOf(m *Message) Origin {
	return Origin{ChatID: m.Chat.ID, UserID: m.From.ID, MessageID: m.MessageID, Username: m.From.Username, Group: m.Chat.Type != "private"}
}

// who is the audit trail's name for a user.
func who(u *User) string {
	s := fmt.Sprintf("telegram:%d", u.ID)
	if u.Username != "" {
		s += " (@" + u.Username + ")"
	}
	return s
}

// process handles one inbox item and removes it once its reply is delivered. An error
// means the store failed; the item stays and is tried again.
func (c *Channel) process(ctx context.Context, it store.QueueItem) error {
	var u Update
	if err := json.Unmarshal(it.Data, &u); err != nil || u.Message == nil || u.Message.From == nil {
		c.log.Warn("telegram: dropping an inbox item that does not decode", "update_id", it.ID, "err", err)
		return c.st.QueueDone(QueueName, it.ID)
	}
	m := u.Message
	o := originOf(m)

	var out []outMsg
	if it.State == store.Started {
		// Begun before a crash or stop: never run again; say what is known.
		out = c.interrupted(it, m)
	} else {
		out = c.handle(ctx, it, m)
	}
	if err := c.send(ctx, o, out, nil); err != nil {
		return err // ctx ended: the item stays and is handled at the next start
	}
	return c.st.QueueDone(QueueName, it.ID)
}

// handle answers a queued message.
func (c *Channel) handle(ctx context.Context, it store.QueueItem, m *Message) []outMsg {
	private := m.Chat.Type == "private"
	// Access is checked again: the gate ran when the update arrived.
	allowed := (private && c.access.userAllowed(m.From.ID)) || (!private && c.access.chatAllowed(m.Chat.ID))
	cmd, rest, other := c.command(m)
	if other {
		return nil
	}
	if !allowed {
		if private && c.cfg.Pairing && cmd == "/pair" {
			return c.pair(m, rest)
		}
		return nil
	}
	if m.Text == "" {
		return plainMessages("I read text only: send a command such as @gpio/read{pin=\"led\"}, or /help.")
	}
	text := m.Text
	if !private {
		text = c.stripMention(text)
		cmd, rest, _ = c.command(&Message{Text: text})
	}
	switch cmd {
	case "":
	case "/start":
		return c.welcome(m.From)
	case "/help":
		text = strings.TrimSpace("help " + rest)
	case "/status", "/pins", "/ports", "/audit":
		text = strings.TrimPrefix(cmd, "/")
	case "/remember", "/forget":
		// The dispatcher's memory words (channels/memory.go): the sender's own words.
		text = strings.TrimSpace(strings.TrimPrefix(cmd, "/") + " " + rest)
	case "/goal", "/goals":
		// The dispatcher's goal words (channels/goals.go): the sender's own goal.
	case "/pair":
		return plainMessages("You can already use this bot.")
	case "/web":
		// The dispatcher's /web (channels/webpair.go): web/pair on the call
		// path, which the authorizer decides (an owner). A code is sent only
		// in a private chat: a group would show it to everyone.
		if !private {
			return plainMessages("A browser is paired only in a private chat with me: the code must not be shown to a group.")
		}
		text = strings.TrimSpace("/web " + rest)
	case "/elevated":
		// The dispatcher opens an owner's window (channels/elevated.go).
	default:
		return plainMessages("Unknown command " + cmd + ". Try /help, /status or /pins, or a command such as @gpio/read{pin=\"led\"}.")
	}

	d := c.cfg.Dispatcher
	// The message's calls are audited against its inbox item, and an approval they
	// need is asked in its chat.
	msg := channels.Message{Channel: ChannelName, User: who(m.From), Text: text,
		Audit: store.QueueAuditor{Store: c.st, Queue: QueueName, Item: it.ID}, Asker: asker{c, originOf(m)}}
	if d.ForAgent(text) { // a model turn: show "typing" while it runs
		stop := c.typing(ctx, m.Chat.ID)
		defer stop()
	}
	resp := d.Respond(ctx, msg)
	switch {
	case resp.Text == "":
		return nil
	case resp.Report != nil || resp.Failed:
		return codeMessages(resp.Text)
	}
	return textMessages(resp.Text)
}

// typing shows "typing…" until stop is called; Telegram clears it after about five
// seconds, so it is repeated every four.
func (c *Channel) typing(ctx context.Context, chat int64) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	c.wg.Go(func() {
		t := time.NewTicker(4 * time.Second)
		defer t.Stop()
		for {
			if err := c.client.SendChatAction(ctx, chat, "typing"); err != nil && ctx.Err() == nil {
				c.log.Debug("telegram: typing action", "err", err)
			}
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			}
		}
	})
	return cancel
}

func (c *Channel) welcome(u *User) []outMsg {
	name := u.FirstName
	if name == "" {
		name = "there"
	}
	md := "Hello " + EscapeMarkdownV2(name) + "\\. I run commands on this board\\.\n\n" +
		bold("Commands") + "\n" +
		"/status — version, uptime, board\n" +
		"/pins — the pins and their levels\n" +
		"/help — the tools; /help gpio/write for one\n" +
		"/remember TEXT — keep a note; /forget ID — drop one \\(/forget lists them\\)\n" +
		"/goal TEXT — a goal pursued over time; /goals lists them\n\n" +
		bold("Command language") + "\n" +
		code(`@gpio/write{pin="led";value=1}`) + "\n" +
		code(`@gpio/toggle{pin="led"}->@gpio/read{pin="led"}`) + "\n\n" +
		EscapeMarkdownV2("Anything else goes to the assistant, when a model is configured.")
	plain := "Hello " + name + ". I run commands on this board.\n\nCommands\n/status — version, uptime, board\n/pins — the pins and their levels\n/help — the tools; /help gpio/write for one\n/remember TEXT — keep a note; /forget ID — drop one (/forget lists them)\n/goal TEXT — a goal pursued over time; /goals lists them\n\nCommand language\n" +
		`@gpio/write{pin="led";value=1}` + "\n" + `@gpio/toggle{pin="led"}->@gpio/read{pin="led"}` + "\n\nAnything else goes to the assistant, when a model is configured."
	return []outMsg{{md: md, plain: plain}}
}

// pair is the conversation with an unknown user when pairing is on (pairing.go has
// the limits).
func (c *Channel) pair(m *Message, code string) []outMsg {
	u := *m.From
	var r pairReply
	var err error
	if code == "" {
		r, err = c.access.request(u)
	} else {
		r, err = c.access.redeem(u, strings.TrimSpace(code))
	}
	if err != nil {
		c.log.Error("telegram: pairing: the store failed", "user", u.ID, "err", err)
		return plainMessages("Pairing failed on the board's side; ask the owner to check the log.")
	}
	// One line per cooldown that started, not one per refused attempt.
	for _, n := range r.notices {
		c.log.Warn(n)
		if f := c.cfg.OnPairingNotice; f != nil {
			f(n)
		}
	}
	switch r.outcome {
	case pairIssued:
		c.log.Warn("telegram pairing request: give this code only to someone you trust", "user", u.ID,
			"username", u.Username, "code", r.req.Code, "valid_until", r.req.Expires.Format(time.RFC3339))
		if f := c.cfg.OnPairingRequest; f != nil {
			f(r.req)
		}
		fallthrough
	case pairWaiting:
		return plainMessages("This bot is private. Ask its owner for the pairing code shown on the clawedge console, then send /pair CODE here within 10 minutes.")
	case pairFull:
		c.log.Debug("telegram: pairing request refused: too many pending", "user", u.ID)
		return plainMessages("Too many pairing requests are waiting. Try again in a few minutes.")
	case pairPaused:
		wait := max(r.until.Sub(c.now()).Round(time.Minute), time.Minute)
		return plainMessages(fmt.Sprintf("Pairing is paused after too many attempts. Try again in %s.", fmtWait(wait)))
	case pairOK:
		c.log.Warn("telegram: user paired", "user", u.ID, "username", u.Username)
		return plainMessages("Paired: you can now use this bot. Try /help.")
	case pairWrong:
		return plainMessages("That code is not right.")
	case pairVoid:
		return plainMessages("That pairing request is no longer valid. Send /pair to start again.")
	}
	return plainMessages("No pairing request is waiting for you. Send /pair first.")
}

// fmtWait says a wait in words: "20 minutes", "2 hours", "1 hour 30 minutes".
func fmtWait(d time.Duration) string {
	h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
	unit := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case h == 0:
		return unit(m, "minute")
	case m == 0:
		return unit(h, "hour")
	}
	return unit(h, "hour") + " " + unit(m, "minute")
}

// interrupted is the reply for an item that was started before a crash or stop.
func (c *Channel) interrupted(it store.QueueItem, m *Message) []outMsg {
	var b strings.Builder
	fmt.Fprintf(&b, "clawedge stopped while handling your message:\n%s\nIt was not run again.", oneLine(m.Text, 200))
	entries, err := c.st.AuditEntries(it.Audit)
	if err != nil {
		c.log.Error("telegram: reading the audit trail", "err", err)
	}
	if len(entries) > 0 {
		b.WriteString(" The audit trail says:")
		for _, e := range entries {
			b.WriteString("\n" + e.String())
		}
	} else {
		b.WriteString(" No tool had started.")
	}
	c.log.Warn("telegram: reporting a message interrupted by the last stop", "update_id", it.ID, "calls", len(entries))
	return codeMessages(b.String())
}

// send delivers a reply, chunk by chunk. MarkdownV2 that Telegram refuses is sent again
// as plain text. Network errors and 5xx are retried until ctx ends; 429 waits as told;
// other refusals (the user blocked the bot, the chat is gone) drop the reply, logged.
// The error is ctx's, when it ended first.
func (c *Channel) send(ctx context.Context, o Origin, out []outMsg, kb *InlineKeyboard) error {
	for i, m := range out {
		req := SendMessage{ChatID: o.ChatID, Text: validUTF8(m.md), ParseMode: "MarkdownV2"}
		if m.md == "" {
			req.Text, req.ParseMode = validUTF8(m.plain), ""
		}
		if o.Group && i == 0 && o.MessageID != 0 {
			req.ReplyParameters = &ReplyParameters{MessageID: o.MessageID, AllowSendingWithoutReply: true}
		}
		if i == len(out)-1 {
			req.ReplyMarkup = kb
		}
		if _, err := c.sendOne(ctx, req, m.plain); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			c.log.Warn("telegram: reply not delivered", "chat", o.ChatID, "err", err)
			return nil
		}
	}
	return nil
}

// sendOne sends one message with retries and the plain-text fallback.
func (c *Channel) sendOne(ctx context.Context, req SendMessage, plain string) (Message, error) {
	b := c.newBackoff()
	for {
		msg, err := c.client.SendMessage(ctx, req)
		countSend(err) // metrics.go
		if err == nil {
			return msg, nil
		}
		var ae *APIError
		switch {
		case ctx.Err() != nil:
			return Message{}, ctx.Err()
		case errors.As(err, &ae) && ae.Code == 400 && req.ParseMode != "" && strings.Contains(strings.ToLower(ae.Description), "can't parse entities"):
			c.log.Warn("telegram: MarkdownV2 refused, sending plain text", "err", err)
			req.Text, req.ParseMode = validUTF8(plain), ""
			continue
		case errors.As(err, &ae) && !ae.Temporary():
			if fatal := c.fatal(err); fatal != nil {
				c.log.Error("telegram: sending", "err", fatal)
			}
			return Message{}, err
		}
		if !b.wait(ctx, err, "sendMessage") {
			return Message{}, ctx.Err()
		}
	}
}

// Notify sends text to a chat as plain text (for events); it retries like a reply.
func (c *Channel) Notify(ctx context.Context, chat int64, text string) error {
	for _, m := range plainMessages(text) {
		if _, err := c.sendOne(ctx, SendMessage{ChatID: chat, Text: m.plain}, m.plain); err != nil {
			return err
		}
	}
	return nil
}

var _ tools.Auditor = store.QueueAuditor{}
