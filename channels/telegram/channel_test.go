package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/store"
)

func TestCommandsAndWords(t *testing.T) {
	h := newHarness(t, nil, "")
	h.start(h.config())
	srv := h.srv

	srv.Text(owner, nil, `@gpio/write{pin="led";value=1}`)
	got := h.reply(owner.ID, 1)
	if !strings.HasPrefix(got, "```\n") || !strings.Contains(plainOf(t, got), "led = 1") {
		t.Errorf("command reply = %q, want a code block saying led = 1", got)
	}
	if h.sim.Level(gpioLED) != hal.High {
		t.Error("the LED is not on")
	}
	last := srv.Calls("sendMessage")[0]
	if last.Str("parse_mode") != "MarkdownV2" || last.Params["reply_parameters"] != nil {
		t.Errorf("private reply: parse_mode %q, reply_parameters %v", last.Str("parse_mode"), last.Params["reply_parameters"])
	}
	entries := audit(t, h.st)
	if len(entries) != 1 || entries[0].Who != "telegram:42 (@olga)" || entries[0].Channel != "telegram" || !entries[0].OK {
		t.Errorf("audit = %+v", entries)
	}

	for i, tc := range []struct{ send, want string }{
		{"/start", "I run commands on this board"},
		{"/pins", "led"},
		{"/status", "version"},
		{"/help", "gpio/write"},
		{"/help gpio/write", "value"},
		{"pins", "button"},
		{"what is the weather?", "No model is configured"},
		{"/frobnicate", "Unknown command /frobnicate"},
		{"/elevated 10m", "Elevated until"},
		{`@gpio/write{pin="led";value=}`, "column 29"},
		{`@gpio/toggle{pin="led"}->@gpio/read{pin="led"}`, "gpio/read: led = 0"},
	} {
		srv.Text(owner, nil, tc.send)
		got := h.reply(owner.ID, i+2)
		if c := srv.Calls("sendMessage"); c[len(c)-1].Str("parse_mode") == "MarkdownV2" {
			got = plainOf(t, got)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: reply %q does not contain %q", tc.send, got, tc.want)
		}
	}
	h.drained()
	if off, _, _ := h.st.QueueOffset(QueueName); !srv.Confirmed(int64(off) - 1) {
		t.Errorf("offset %d not confirmed to the server", off)
	}
}

func TestStickersEditsAndBots(t *testing.T) {
	h := newHarness(t, nil, "")
	h.start(h.config())
	h.srv.Edited(owner, `@gpio/write{pin="led";value=1}`)
	h.srv.Push(map[string]any{"message": h.srv.Message(telegramtest.User{ID: 7, IsBot: true, FirstName: "bot"}, nil, "@gpio/write{pin=\"led\";value=1}")})
	h.srv.Sticker(owner)
	got := h.reply(owner.ID, 1)
	if !strings.Contains(got, "I read text only") {
		t.Errorf("sticker reply = %q", got)
	}
	h.drained()
	if n := len(h.srv.Sent(owner.ID)); n != 1 {
		t.Errorf("%d replies, want 1 (the edit is ignored)", n)
	}
	if h.sim.Level(gpioLED) != hal.Low || len(audit(t, h.st)) != 0 {
		t.Error("an edited message or a bot's message ran a command")
	}
}

// Deny by default: strangers cause no outbound call at all.
func TestStrangerGetsNothing(t *testing.T) {
	h := newHarness(t, nil, "")
	h.start(h.config())
	for _, text := range []string{"hello", "/start", "/pair", "/pair 123456", `@gpio/write{pin="led";value=1}`} {
		h.srv.Text(stranger, nil, text)
	}
	h.srv.Sticker(stranger)
	h.srv.Text(stranger, &group, "@clawedge_bot pins") // a group that is not allowed
	// Button presses (issue 11 item 5): a stranger's, one without "from", one under a
	// message in a group that is not allowed.
	h.srv.Press(stranger, stranger.ID, 1, "ap:0123456789abcdef:y")
	h.srv.Press(stranger, group.ID, 1, "zz")
	h.srv.Push(map[string]any{"callback_query": map[string]any{"id": "cq-nofrom", "chat_instance": "1", "data": "ap:0123456789abcdef:n",
		"message": map[string]any{"message_id": 1, "date": 1, "chat": telegramtest.Chat{ID: owner.ID, Type: "private"}, "text": "approval"}}})
	h.drained()
	// The owner's press, in a later batch, is answered; by then the strangers' would be too.
	h.srv.Push(map[string]any{"callback_query": map[string]any{"id": "cq-owner", "from": owner, "chat_instance": "1", "data": "zz"}})
	h.srv.Wait(t, 5*time.Second, "the owner's press answered", func() bool { return h.srv.Count("answerCallbackQuery") >= 1 })
	h.stop()
	for _, c := range h.srv.Calls("") {
		if c.Method == "answerCallbackQuery" && c.Str("callback_query_id") == "cq-owner" {
			continue
		}
		if c.Method != "getUpdates" && c.Method != "getMe" {
			t.Errorf("a stranger caused a %s call: %s", c.Method, c.Raw)
		}
	}
	if h.sim.Level(gpioLED) != hal.Low || len(audit(t, h.st)) != 0 {
		t.Error("a stranger's command ran")
	}
}

func TestPairing(t *testing.T) {
	h := newHarness(t, nil, "")
	now := time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC)
	var clock = func() time.Time { return now }
	codes := make(chan PairingRequest, 4)
	cfg := h.config()
	cfg.Pairing, cfg.Now = true, func() time.Time { return clock() }
	cfg.OnPairingRequest = func(r PairingRequest) { codes <- r }
	h.start(cfg)

	h.srv.Text(stranger, nil, "hello")
	h.srv.Text(stranger, nil, "/pair")
	if got := h.reply(stranger.ID, 1); !strings.Contains(got, "Ask its owner for the pairing code") {
		t.Errorf("/pair reply = %q", got)
	}
	var req PairingRequest
	select {
	case req = <-codes:
	case <-time.After(5 * time.Second):
		t.Fatal("no pairing code shown")
	}
	if req.UserID != stranger.ID || len(req.Code) != 6 || !strings.Contains(req.String(), "/pair "+req.Code) || !strings.Contains(req.String(), "@mallory") {
		t.Errorf("request = %+v (%s)", req, req)
	}
	if !strings.Contains(h.log.String(), "code="+req.Code) {
		t.Errorf("the code is not in the log:\n%s", h.log)
	}
	// A second /pair does not make a second code.
	h.srv.Text(stranger, nil, "/pair")
	h.reply(stranger.ID, 2)
	if len(codes) != 0 {
		t.Error("a second code was made")
	}
	wrong := "000000"
	if req.Code == wrong {
		wrong = "111111"
	}
	h.srv.Text(stranger, nil, "/pair "+wrong)
	if got := h.reply(stranger.ID, 3); !strings.Contains(got, "not right") {
		t.Errorf("wrong code reply = %q", got)
	}
	// Another stranger cannot use someone else's code.
	other := telegramtest.User{ID: 667, FirstName: "Eve"}
	h.srv.Text(other, nil, "/pair "+req.Code)
	if got := h.reply(other.ID, 1); !strings.Contains(got, "No pairing request") {
		t.Errorf("someone else's code: %q", got)
	}
	h.srv.Text(stranger, nil, `@gpio/write{pin="led";value=1}`) // still not allowed: no reply
	h.srv.Text(stranger, nil, "/pair "+req.Code)
	if got := h.reply(stranger.ID, 4); !strings.Contains(got, "Paired") {
		t.Errorf("right code reply = %q", got)
	}
	h.srv.Text(stranger, nil, `@gpio/read{pin="led"}`)
	if got := plainOf(t, h.reply(stranger.ID, 5)); !strings.Contains(got, "led = 0") {
		t.Errorf("after pairing: %q", got)
	}

	// Paired survives a restart; pairing is persisted.
	h.stop()
	h.start(cfg)
	h.srv.Text(stranger, nil, "/pins")
	h.reply(stranger.ID, 6)

	// Expiry: a code older than 10 minutes is void, and its user waits a cooldown.
	h.srv.Text(other, nil, "/pair")
	h.reply(other.ID, 2)
	req = <-codes
	now = now.Add(PairingTTL + time.Second)
	h.srv.Text(other, nil, "/pair "+req.Code)
	if got := h.reply(other.ID, 3); !strings.Contains(got, "Try again in 10 minutes") {
		t.Errorf("expired code reply = %q", got)
	}
	// Five wrong codes void a request.
	now = now.Add(userCooldown)
	h.srv.Text(other, nil, "/pair")
	h.reply(other.ID, 4)
	req = <-codes
	for i := range maxPairAttempts - 1 {
		h.srv.Text(other, nil, "/pair x")
		h.reply(other.ID, 5+i)
	}
	h.srv.Text(other, nil, "/pair x")
	if got := h.reply(other.ID, 4+maxPairAttempts); !strings.Contains(got, "no longer valid") {
		t.Errorf("the fifth wrong code: %q", got)
	}
	h.srv.Text(other, nil, "/pair "+req.Code)
	if got := h.reply(other.ID, 5+maxPairAttempts); !strings.Contains(got, "Pairing is paused") {
		t.Errorf("after five wrong codes: %q", got)
	}
}

func TestGroups(t *testing.T) {
	h := newHarness(t, nil, "")
	cfg := h.config()
	cfg.AllowChats = []int64{group.ID}
	h.start(cfg)
	member := telegramtest.User{ID: 500, FirstName: "Gina"}
	other := telegramtest.Chat{ID: -2002, Type: "group"}

	h.srv.Text(member, &group, "pins")                                                                               // no mention: ignored
	h.srv.Text(member, &other, "@clawedge_bot pins")                                                                 // not allowed
	h.srv.Push(map[string]any{"message": telegramtest.Mention(h.srv.Message(member, &other, "@clawedge_bot pins"))}) // still not allowed
	h.srv.Text(member, &group, "/pins@otherbot")                                                                     // another bot's
	h.srv.Push(map[string]any{"message": telegramtest.Mention(h.srv.Message(member, &group, "@clawedge_bot pins"))})
	got := h.reply(group.ID, 1)
	if !strings.Contains(plainOf(t, got), "button") {
		t.Errorf("mention reply = %q", got)
	}
	c := h.srv.Calls("sendMessage")[0]
	rp, _ := c.Params["reply_parameters"].(map[string]any)
	if rp == nil || rp["message_id"] == nil {
		t.Errorf("a group reply should reply to the message: %s", c.Raw)
	}
	h.srv.Text(member, &group, "/pins@clawedge_bot")
	h.reply(group.ID, 2)
	// A reply to the bot's message counts.
	m := h.srv.Message(member, &group, "status")
	m["reply_to_message"] = map[string]any{"message_id": 1, "from": telegramtest.Bot, "chat": group, "date": 0, "text": "x"}
	h.srv.Push(map[string]any{"message": m})
	if got := plainOf(t, h.reply(group.ID, 3)); !strings.Contains(got, "version") {
		t.Errorf("reply-to-bot reply = %q", got)
	}
	h.drained()
	if n := len(h.srv.Sent(group.ID)); n != 3 {
		t.Errorf("%d group replies, want 3", n)
	}
	if n := len(h.srv.Sent(other.ID)); n != 0 {
		t.Errorf("answered in a group that is not allowed")
	}
	for _, e := range audit(t, h.st) {
		if e.Who != "telegram:500" {
			t.Errorf("group call audited as %q", e.Who)
		}
	}
}

func TestFaultsAreRetried(t *testing.T) {
	h := newHarness(t, nil, "")
	srv := h.srv
	srv.Fail("getMe", telegramtest.Fault{Status: 502})
	srv.Fail("getUpdates",
		telegramtest.Fault{Status: 500},
		telegramtest.Fault{Body: "<html>Bad Gateway</html>", Status: 502},
		telegramtest.Fault{Body: `{"ok":true,"result":[{"update_id":`}, // cut short
		telegramtest.Fault{Delay: 300 * time.Millisecond, Status: 504},
		telegramtest.Fault{Status: 429, RetryAfter: 1},
	)
	srv.Fail("sendMessage", telegramtest.Fault{Status: 500}, telegramtest.Fault{Status: 429, RetryAfter: 1})
	h.start(h.config())
	srv.Text(owner, nil, `@gpio/write{pin="led";value=1}`)
	start := time.Now()
	if got := plainOf(t, h.reply(owner.ID, 1)); !strings.Contains(got, "led = 1") {
		t.Errorf("reply = %q", got)
	}
	if el := time.Since(start); el < 2*time.Second {
		t.Errorf("replied after %v; two retry_after: 1 should take 2 s", el)
	}
	// The 429 on getUpdates was honoured: the call after it came a second later.
	var gu []telegramtest.Call
	for _, c := range srv.Calls("getUpdates") {
		gu = append(gu, c)
	}
	for i, c := range gu[:len(gu)-1] {
		if c.Status == 429 && gu[i+1].At.Sub(c.At) < 900*time.Millisecond {
			t.Errorf("getUpdates retried %v after a 429 with retry_after 1", gu[i+1].At.Sub(c.At))
		}
	}
	if sends := srv.Calls("sendMessage"); len(sends) != 3 {
		t.Errorf("%d sendMessage calls, want 3 (500, 429, ok)", len(sends))
	}
	if len(audit(t, h.st)) != 1 {
		t.Error("the command did not run exactly once")
	}
	if !strings.Contains(h.log.String(), "telegram unreachable, retrying") {
		t.Errorf("no retry logged:\n%s", h.log)
	}
	if strings.Contains(h.log.String(), srv.Token) {
		t.Errorf("the token is in the log")
	}
}

func TestUnauthorizedIsFatalAndSecret(t *testing.T) {
	h := newHarness(t, nil, "")
	cfg := h.config()
	bad := "999999:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB"
	cfg.Client = NewClient(h.srv.URL, bad, ClientOptions{})
	ch, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = ch.Run(ctx)
	if !errors.Is(err, ErrUnauthorized) || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), bad) {
		t.Fatalf("Run = %v, want a 401 naming no token", err)
	}
	if strings.Contains(h.log.String(), bad) {
		t.Error("the token is in the log")
	}
}

// The token is in every URL; no error may carry it.
func TestClientErrorsNeverShowTheToken(t *testing.T) {
	srv := telegramtest.New(t)
	tok := srv.Token
	url := srv.URL
	srv.Close() // connection refused from now on
	c := NewClient(url, tok, ClientOptions{})
	c.Timeout = 2 * time.Second
	_, err := c.GetMe(context.Background())
	var ne *NetError
	if !errors.As(err, &ne) || strings.Contains(err.Error(), tok) || strings.Contains(err.Error(), strings.Split(tok, ":")[1]) {
		t.Errorf("GetMe on a closed server = %v", err)
	}
	// A bad URL (the token is part of it) is reported without it.
	c = NewClient("http://bad host", tok, ClientOptions{})
	if _, err := c.GetMe(context.Background()); err == nil || strings.Contains(err.Error(), tok) {
		t.Errorf("bad URL: %v", err)
	}
	// Timeout.
	srv2 := telegramtest.New(t)
	srv2.Fail("getMe", telegramtest.Fault{Delay: 2 * time.Second})
	c = NewClient(srv2.URL, srv2.Token, ClientOptions{})
	c.Timeout = 100 * time.Millisecond
	if _, err := c.GetMe(context.Background()); !errors.As(err, &ne) || strings.Contains(err.Error(), srv2.Token) {
		t.Errorf("timeout: %v", err)
	}
	// A description that echoes the token.
	srv2.Fail("getMe", telegramtest.Fault{Status: 400, Description: "Bad Request: bot" + srv2.Token + " broken"})
	c.Timeout = 5 * time.Second
	if _, err := c.GetMe(context.Background()); err == nil || strings.Contains(err.Error(), srv2.Token) {
		t.Errorf("echoed token: %v", err)
	}
	if err := CheckToken(srv2.Token); err != nil || TokenShape(srv2.Token) != nil {
		t.Errorf("CheckToken(good) = %v, %v", err, TokenShape(srv2.Token))
	}
	for _, bad := range []string{"", " " + srv2.Token, "1:a/b", "1:a?b", "1:a b"} {
		if err := CheckToken(bad); err == nil || (len(bad) > 4 && strings.Contains(err.Error(), bad)) {
			t.Errorf("CheckToken(%q) = %v", bad, err)
		}
	}
	for _, odd := range []string{"abc", "12:short", "x:" + strings.Repeat("a", 35)} {
		if err := CheckToken(odd); err != nil {
			t.Errorf("CheckToken(%q) = %v, want only a shape warning", odd, err)
		}
		if err := TokenShape(odd); err == nil || strings.Contains(err.Error(), odd) {
			t.Errorf("TokenShape(%q) = %v", odd, err)
		}
	}
}

func TestMarkdownRefusedFallsBackToPlain(t *testing.T) {
	h := newHarness(t, nil, "")
	h.srv.Fail("sendMessage", telegramtest.Fault{Status: 400, Description: "Bad Request: can't parse entities: Character '.' is reserved"})
	h.start(h.config())
	h.srv.Text(owner, nil, `@gpio/read{pin="led"}`)
	got := h.reply(owner.ID, 1)
	sends := h.srv.Calls("sendMessage")
	if len(sends) != 2 || sends[0].Str("parse_mode") != "MarkdownV2" || sends[1].Str("parse_mode") != "" || got != "led = 0 (low)" {
		t.Errorf("sends = %d, second parse_mode %q, text %q", len(sends), sends[len(sends)-1].Str("parse_mode"), got)
	}
}

func TestLongRepliesAreSplit(t *testing.T) {
	var lines []string
	for i := range 700 {
		lines = append(lines, fmt.Sprintf("line %d: a_b*c [x](y) `q` \\ 😀 ends.", i))
	}
	long := strings.Join(lines, "\n") + "\n" + strings.Repeat("é😀.", 3000)
	h := newHarness(t, nil, "")
	h.start(h.config(withAgent(agentFunc(func(ctx context.Context, m channels.Message) (string, error) { return long, nil }))))
	h.srv.Text(owner, nil, "tell me everything")
	h.srv.Wait(t, 10*time.Second, "the whole reply", func() bool {
		var all []string
		for _, s := range h.srv.Sent(owner.ID) {
			all = append(all, plainOfQuiet(s))
		}
		return strings.ReplaceAll(strings.Join(all, ""), "\n", "") == strings.ReplaceAll(long, "\n", "")
	})
	if n := len(h.srv.Sent(owner.ID)); n < 5 {
		t.Errorf("%d messages, want several", n)
	}
	for _, c := range h.srv.Calls("sendMessage") {
		if c.Status != 200 {
			t.Errorf("Telegram refused a chunk: %s", c.Raw[:200])
		}
	}
}

func plainOfQuiet(md string) string {
	p, _ := telegramtest.ParseMarkdownV2(md)
	return p
}

func TestTypingWhileTheAgentWorks(t *testing.T) {
	release := make(chan struct{})
	h := newHarness(t, nil, "")
	h.start(h.config(withAgent(agentFunc(func(ctx context.Context, m channels.Message) (string, error) {
		<-release
		return "done thinking", nil
	}))))
	h.srv.Text(owner, nil, "think hard")
	h.srv.Wait(t, 5*time.Second, "a typing action", func() bool { return h.srv.Count("sendChatAction") > 0 })
	if c := h.srv.Calls("sendChatAction")[0]; c.Str("action") != "typing" || c.Int("chat_id") != owner.ID {
		t.Errorf("chat action = %s", c.Raw)
	}
	close(release)
	if got := plainOf(t, h.reply(owner.ID, 1)); got != "done thinking" {
		t.Errorf("reply = %q", got)
	}
	// Commands do not show typing.
	n := h.srv.Count("sendChatAction")
	h.srv.Text(owner, nil, `@gpio/read{pin="led"}`)
	h.reply(owner.ID, 2)
	if h.srv.Count("sendChatAction") != n {
		t.Error("a command showed typing")
	}
}

// A crash leaves items in the inbox: queued ones run, started ones are reported and
// never rerun.
func TestRecoveryAfterCrash(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, nil, dir)
	upd := func(id int64, text string) []byte {
		b, _ := json.Marshal(map[string]any{"update_id": id, "message": h.srv.Message(owner, nil, text)})
		return b
	}
	// Update 5 had started (its toggle's intent recorded) when the process died;
	// update 6 was queued and nothing had happened.
	if _, err := h.st.Enqueue(QueueName, 7, []store.NewQueueItem{
		{ID: 5, Data: upd(5, `@gpio/toggle{pin="led"}`)},
		{ID: 6, Data: upd(6, `@gpio/write{pin="led";value=1}`)},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.st.QueueIntent(QueueName, 5, "telegram:42 (@olga)", "telegram", `@gpio/toggle{pin="led"}`); err != nil {
		t.Fatal(err)
	}
	if n, _ := h.st.Interrupted(); n != 1 { // what the daemon does at start
		t.Fatalf("Interrupted = %d", n)
	}
	h.start(h.config())
	first := plainOf(t, h.reply(owner.ID, 1))
	if !contains(first, "stopped while handling", `@gpio/toggle{pin="led"}`, "not run again", "interrupted") {
		t.Errorf("recovery reply = %q", first)
	}
	if got := plainOf(t, h.reply(owner.ID, 2)); !strings.Contains(got, "led = 1") {
		t.Errorf("queued item reply = %q", got)
	}
	h.drained()
	var toggles, writes int
	for _, e := range audit(t, h.st) {
		switch {
		case strings.HasPrefix(e.Command, "@gpio/toggle"):
			toggles++
		case strings.HasPrefix(e.Command, "@gpio/write"):
			writes++
		}
	}
	if toggles != 1 || writes != 1 {
		t.Errorf("toggles %d, writes %d: want each exactly once", toggles, writes)
	}
	// The getUpdates offset came from the store.
	h.srv.Wait(t, 5*time.Second, "a getUpdates", func() bool { return h.srv.Count("getUpdates") > 0 })
	if c := h.srv.Calls("getUpdates")[0]; c.Int("offset") != 7 {
		t.Errorf("first getUpdates offset = %d, want 7", c.Int("offset"))
	}
}

// An update that comes again (the acknowledgement was lost) runs once.
func TestRedeliveryIsDropped(t *testing.T) {
	h := newHarness(t, nil, "")
	id := h.srv.Text(owner, nil, `@gpio/toggle{pin="led"}`)
	// As if a previous run stored and handled it, and died before its next getUpdates.
	raw, _ := json.Marshal(map[string]any{"update_id": id})
	if _, err := h.st.Enqueue(QueueName, 0, []store.NewQueueItem{{ID: uint64(id), Data: raw}}); err != nil {
		t.Fatal(err)
	}
	h.st.QueueDone(QueueName, uint64(id))
	h.start(h.config())
	h.drained()
	if len(audit(t, h.st)) != 0 || len(h.srv.Sent(owner.ID)) != 0 {
		t.Error("a redelivered update ran again")
	}
}

func TestMalformedAndHugeUpdates(t *testing.T) {
	h := newHarness(t, nil, "")
	h.srv.PushRaw(`{"update_id": "nope"}`)
	h.srv.PushRaw(`{"update_id": 5000, "message": {"message_id": "x"}}`)
	huge := h.srv.Message(owner, nil, strings.Repeat("x", store.MaxQueueData))
	h.srv.Push(map[string]any{"message": huge})
	h.srv.Text(owner, nil, `@gpio/read{pin="led"}`)
	h.start(h.config())
	if got := plainOf(t, h.reply(owner.ID, 1)); !strings.Contains(got, "led = 0") {
		t.Errorf("reply = %q", got)
	}
	h.drained()
	if len(h.srv.Sent(owner.ID)) != 1 {
		t.Error("a malformed or oversized update got a reply")
	}
}

// Issue 11 item 4: pairing cannot be brute-forced nor flood the owner. A stranger who
// keeps asking and guessing gets one code, then growing cooldowns; codes per hour are
// capped for everyone; the owner sees one line per code and per cooldown started, never
// one per refused attempt; and a restart resets none of it. The clock is fake.
func TestPairingLimits(t *testing.T) {
	h := newHarness(t, nil, "")
	var mu sync.Mutex
	now := time.Date(2026, 11, 21, 14, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var codes []PairingRequest
	var notices []string
	cfg := h.config()
	cfg.Pairing, cfg.Now = true, clock
	cfg.OnPairingRequest = func(r PairingRequest) { mu.Lock(); codes = append(codes, r); mu.Unlock() }
	cfg.OnPairingNotice = func(l string) { mu.Lock(); notices = append(notices, l); mu.Unlock() }
	counts := func() (int, int) { mu.Lock(); defer mu.Unlock(); return len(codes), len(notices) }
	lastCode := func() string { mu.Lock(); defer mu.Unlock(); return codes[len(codes)-1].Code }
	h.start(cfg)
	replies := map[int64]int{}
	say := func(u telegramtest.User, text string) string {
		t.Helper()
		h.srv.Text(u, nil, text)
		replies[u.ID]++
		advance(time.Second)
		return h.reply(u.ID, replies[u.ID])
	}
	wrongFor := func(code string) string {
		if code == "000000" {
			return "/pair 111111"
		}
		return "/pair 000000"
	}

	// The attacker: /pair and five wrong guesses, over and over.
	for range 20 {
		say(stranger, "/pair")
		for range maxPairAttempts {
			say(stranger, wrongFor(lastCode()))
		}
	}
	if c, n := counts(); c != 1 || n != 1 {
		t.Fatalf("one stranger's 120 messages made %d codes and %d owner lines, want 1 and 1: %q", c, n, notices)
	}
	if got := say(stranger, "/pair"); !strings.Contains(got, "Pairing is paused") {
		t.Errorf("during the cooldown: %q", got)
	}
	// The cooldown doubles: 10 minutes after the first void, 20 after the second.
	advance(userCooldown)
	say(stranger, "/pair")
	for range maxPairAttempts {
		say(stranger, wrongFor(lastCode()))
	}
	advance(userCooldown)
	if got := say(stranger, "/pair"); !strings.Contains(got, "Pairing is paused") {
		t.Errorf("the second cooldown is not longer: %q", got)
	}
	if c, n := counts(); c != 2 || n != 2 || !strings.Contains(notices[1], "20m0s") {
		t.Fatalf("%d codes, owner lines %q", c, notices)
	}

	// A restart resets neither a code's wrong guesses nor a cooldown.
	u1 := telegramtest.User{ID: 701, FirstName: "A"}
	say(u1, "/pair")
	for range maxPairAttempts - 1 {
		say(u1, wrongFor(lastCode()))
	}
	h.stop()
	h.start(cfg)
	if got := say(u1, wrongFor(lastCode())); !strings.Contains(got, "no longer valid") {
		t.Errorf("the fifth wrong guess after a restart: %q", got)
	}
	if got := say(stranger, "/pair"); !strings.Contains(got, "Pairing is paused") {
		t.Errorf("a cooldown after a restart: %q", got)
	}

	// Codes per hour, for everyone: 3 so far; three more users get one each, and the
	// next asks pause pairing for everyone (one owner line), whoever asks.
	for i := range 3 {
		u := telegramtest.User{ID: int64(710 + i), FirstName: "B"}
		say(u, "/pair")
		for range maxPairAttempts {
			say(u, wrongFor(lastCode()))
		}
	}
	c0, n0 := counts()
	if c0 != maxCodesPerHour {
		t.Fatalf("%d codes", c0)
	}
	for i := range 10 {
		u := telegramtest.User{ID: int64(720 + i), FirstName: "C"}
		if got := say(u, "/pair"); !strings.Contains(got, "Pairing is paused") {
			t.Errorf("over the hourly cap: %q", got)
		}
	}
	if c, n := counts(); c != c0 || n != n0+1 || !strings.Contains(notices[n-1], "paused for everyone") {
		t.Errorf("%d codes, owner lines %q", c, notices)
	}
	// Nothing in the log per refused attempt either: warnings are the codes and cooldowns.
	if n := strings.Count(h.log.String(), "level=WARN"); n > c0+n0+1+5 {
		t.Errorf("%d warnings in the log:\n%s", n, h.log)
	}
}
