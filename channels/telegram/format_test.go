package telegram

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
)

func TestEscapeMarkdownV2(t *testing.T) {
	for in, want := range map[string]string{
		"":                  "",
		"plain words":       "plain words",
		"led = 1 (high).":   `led \= 1 \(high\)\.`,
		`a_b*c[d]e~f` + "`": `a\_b\*c\[d\]e\~f` + "\\`",
		`>#+-=|{}!\`:        `\>\#\+\-\=\|\{\}\!\\`,
		"héllo 😀.":          `héllo 😀\.`,
	} {
		if got := EscapeMarkdownV2(in); got != want {
			t.Errorf("EscapeMarkdownV2(%q) = %q, want %q", in, got, want)
		}
		if back, err := telegramtest.ParseMarkdownV2(EscapeMarkdownV2(in)); err != nil || back != in {
			t.Errorf("%q does not come back: %q, %v", in, back, err)
		}
	}
	if got := escapeCode("a`b\\c.d"); got != "a\\`b\\\\c.d" {
		t.Errorf("escapeCode = %q", got)
	}
}

// The fake's parser is the judge of our escaping, so it must refuse what Telegram does.
func TestFakeParserRefuses(t *testing.T) {
	for _, bad := range []string{"a.b", "(x)", "*open", "```\ncode", "x\\", "a`b", "[x]", "1+1", "a!"} {
		if _, err := telegramtest.ParseMarkdownV2(bad); err == nil {
			t.Errorf("ParseMarkdownV2(%q) accepted it", bad)
		}
	}
	for in, want := range map[string]string{"*b* _i_ __u__ ~s~ ||sp||": "b i u s sp", "[t](http://x/y)": "t", "```go\nx := 1\n```": "x := 1\n", "> quote": " quote"} {
		if got, err := telegramtest.ParseMarkdownV2(in); err != nil || got != want {
			t.Errorf("ParseMarkdownV2(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		text  string
		limit int
		want  []string
	}{
		{"", 10, []string{""}},
		{"short", 10, []string{"short"}},
		{"aaa\nbbb\nccc", 7, []string{"aaa\nbbb", "ccc"}},
		{"aaa\nbbb\nccc", 3, []string{"aaa", "bbb", "ccc"}},
		{"abcdefgh", 3, []string{"abc", "def", "gh"}},
		{"ab\n\ncd", 3, []string{"ab\n", "cd"}},
		{"😀😀😀", 4, []string{"😀😀", "😀"}}, // two UTF-16 units each
	} {
		got := Split(tc.text, tc.limit, plainCost)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("Split(%q, %d) = %q, want %q", tc.text, tc.limit, got, tc.want)
		}
	}
	// Escapes count: 4 dots cost 8 in text.
	if got := Split("....", 4, textCost); len(got) != 2 {
		t.Errorf("escaped split = %q", got)
	}
}

func TestMessagesFitTelegram(t *testing.T) {
	text := strings.Repeat("`\\.x😀\n", 3000) + strings.Repeat(".", 9000)
	for name, msgs := range map[string][]outMsg{"code": codeMessages(text), "text": textMessages(text), "plain": plainMessages(text)} {
		var back []string
		for _, m := range msgs {
			if m.md != "" {
				if utf16Len(m.md) > MaxMessageLen {
					t.Errorf("%s: a chunk is %d units", name, utf16Len(m.md))
				}
				p, err := telegramtest.ParseMarkdownV2(m.md)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if name == "code" {
					p = strings.TrimSuffix(p, "\n")
				}
				if p != m.plain {
					t.Errorf("%s: markup shows %q, plain is %q", name, p[:40], m.plain[:40])
				}
			}
			if utf16Len(m.plain) > MaxMessageLen {
				t.Errorf("%s: plain chunk is %d units", name, utf16Len(m.plain))
			}
			back = append(back, m.plain)
		}
		if strings.ReplaceAll(strings.Join(back, ""), "\n", "") != strings.ReplaceAll(text, "\n", "") {
			t.Errorf("%s: chunks lose text", name)
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("aaa\nbbb\nccc", 5)
	f.Add("😀😀😀\n\n\n.", 3)
	f.Add(strings.Repeat("x", 100), 7)
	f.Add("a\xffb\nc", 2)
	f.Fuzz(func(t *testing.T, text string, limit int) {
		if limit > 10000 || limit < -5 || len(text) > 20000 {
			t.Skip()
		}
		for _, cost := range []func(rune) int{plainCost, textCost, codeCost} {
			chunks := Split(text, limit, cost)
			lim := max(limit, 2)
			for _, c := range chunks {
				n := 0
				for _, r := range c {
					n += cost(r)
				}
				if n > lim {
					t.Fatalf("chunk %q costs %d > %d", c, n, lim)
				}
				if utf8.ValidString(text) && !utf8.ValidString(c) {
					t.Fatalf("chunk %q is not UTF-8", c)
				}
			}
			if strings.ReplaceAll(strings.Join(chunks, ""), "\n", "") != strings.ReplaceAll(text, "\n", "") {
				t.Fatalf("Split(%q, %d) = %q loses text", text, limit, chunks)
			}
		}
	})
}

func FuzzMarkdownV2(f *testing.F) {
	f.Add("led = 1 (high).")
	f.Add("a_b*c[d]e~f`g>h#i+j-k=l|m{n}o.p!q\\r")
	f.Add("```\nx\n```")
	f.Add("😀 \x00 é")
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			s = validUTF8(s)
		}
		if back, err := telegramtest.ParseMarkdownV2(EscapeMarkdownV2(s)); err != nil || back != s {
			t.Fatalf("escaped %q parses to %q, %v", s, back, err)
		}
		for _, m := range append(codeMessages(s), textMessages(s)...) {
			if _, err := telegramtest.ParseMarkdownV2(m.md); err != nil {
				t.Fatalf("chunk of %q does not parse: %v\n%s", s, err, m.md)
			}
			if utf16Len(m.md) > MaxMessageLen {
				t.Fatalf("chunk too long")
			}
		}
		// The fake's parser never panics on anything.
		telegramtest.ParseMarkdownV2(s)
	})
}

// FuzzUpdate feeds arbitrary getUpdates results to the admission gate and the routing
// of a message: no input may panic, and nothing from a stranger may be admitted.
func FuzzUpdate(f *testing.F) {
	f.Add(`[{"update_id":1,"message":{"message_id":1,"from":{"id":42},"chat":{"id":42,"type":"private"},"text":"/pins@clawedge_bot x"}}]`)
	f.Add(`[{"update_id":2,"message":{"message_id":1,"from":{"id":666},"chat":{"id":-5,"type":"group"},"text":"@clawedge_bot hi","entities":[{"type":"mention","offset":0,"length":13}]}}]`)
	f.Add(`[{"update_id":3,"callback_query":{"id":"q","from":{"id":1},"data":"ap:zz:y"}}]`)
	f.Add(`[{"update_id":4,"message":{"message_id":1,"from":{"id":42},"chat":{"id":42,"type":"private"},"text":"😀x","entities":[{"type":"mention","offset":1,"length":99}]}},{"update_id":"x"},{}]`)
	f.Add(`[{"update_id":5,"edited_message":{"message_id":1,"chat":{"id":1,"type":"private"}}}]`)
	dir := f.TempDir()
	h := newHarness(f, telegramtest.New(f), dir)
	cfg := h.config()
	cfg.Pairing = true
	cfg.AllowChats = []int64{-5}
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	ch, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	ch.bot = User{ID: telegramtest.Bot.ID, Username: telegramtest.Bot.Username}
	f.Fuzz(func(t *testing.T, batch string) {
		var raws []json.RawMessage
		if json.Unmarshal([]byte(batch), &raws) != nil {
			return
		}
		items, cbs, _ := ch.admit(raws, 0)
		for _, it := range items {
			var u Update
			if err := json.Unmarshal(it.Data, &u); err != nil || u.Message == nil || u.Message.From == nil {
				t.Fatalf("admitted an update that does not decode: %s", it.Data)
			}
			m := u.Message
			if m.Chat.Type == "private" && m.From.ID != owner.ID {
				if cmd, _, _ := ch.command(m); cmd != "/pair" {
					t.Fatalf("admitted a stranger's message: %s", it.Data)
				}
			}
			if m.Chat.Type != "private" && m.Chat.ID != -5 {
				t.Fatalf("admitted a message from a group that is not allowed: %s", it.Data)
			}
			ch.stripMention(m.Text)
			ch.cfg.Dispatcher.ForAgent(m.Text)
		}
		for _, cq := range cbs {
			_ = cq.Data
		}
		_ = context.Background()
	})
}
