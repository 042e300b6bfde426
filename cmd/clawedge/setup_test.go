package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// terminal is the person at setup's terminal: it waits for a prompt, then
// types the answer.
type terminal struct {
	t    *testing.T
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	seen int // output consumed by earlier expects
	done chan struct{}
}

// startTerminal starts cmd on a new PTY and reads what it writes.
func startTerminal(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	term := &terminal{t: t, tty: tty, done: make(chan struct{})}
	go term.read()
	return term
}

// read collects what the program writes until its terminal closes.
func (term *terminal) read() {
	buf := make([]byte, 4096)
	for {
		n, err := term.tty.Read(buf)
		term.mu.Lock()
		term.out.Write(buf[:n])
		term.mu.Unlock()
		if err != nil {
			close(term.done)
			return
		}
	}
}

// answer waits for prompt and types the answer.
func (term *terminal) answer(prompt, answer string) {
	term.t.Helper()
	term.expect(prompt)
	term.tty.Write([]byte(answer + "\r"))
}

// expect waits for text in what setup printed after the last thing waited for.
func (term *terminal) expect(prompt string) {
	term.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		term.mu.Lock()
		rest := term.out.String()[term.seen:]
		i := strings.Index(rest, prompt)
		if i >= 0 {
			term.seen += i + len(prompt)
		}
		term.mu.Unlock()
		if i >= 0 {
			break
		}
		select {
		case <-term.done:
			term.t.Fatalf("setup ended before %q:\n%s", prompt, term.output())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			term.t.Fatalf("no %q within 20 s:\n%s", prompt, term.output())
		}
	}
}

func (term *terminal) output() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return term.out.String()
}

// TestSetupThroughATerminal answers setup's questions at a real terminal
// (a PTY) against the fake Bot API, a fake OpenAI server and a local model
// file, then checks the config it wrote with config check and doctor, and
// that no secret was shown or written into the config.
func TestSetupThroughATerminal(t *testing.T) {
	needLocalModel(t) // doctor, at the end, checks the runner
	bot := telegramtest.New(t)
	lan := openaitest.New(t)
	lan.Default(func(openaitest.Request) openaitest.Reply { return openaitest.Text("OK") })
	model := synthModel(t, "micro", gguf.F16, testVocab(t))
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "clawedge.yaml")
	const apiKey = "sk-lan-SECRET-0123456789"

	cmd := exec.Command(binPath, "setup", "--config", cfgPath, "--telegram-api-url", bot.URL)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir)
	term := startTerminal(t, cmd)

	term.answer("Board driver", "sim")
	term.answer("Pins by name", "lamp=17:out door=17:in") // one GPIO for two pins
	term.answer("Serial ports", "")
	term.answer("I2C buses", "")
	term.expect("the board questions again")
	term.answer("Pins by name", "lamp=17:out door=27:in")
	term.answer("Serial ports", "")
	term.answer("I2C buses", "")
	// A /start waiting from long ago names nobody.
	bot.Push(map[string]any{"message": map[string]any{"message_id": 1, "date": 1000, "text": "/start",
		"from": telegramtest.User{ID: 666, FirstName: "Mallory"}, "chat": map[string]any{"id": 666, "type": "private"}}})
	term.answer("Bot token from @BotFather", "123:wrong")
	term.expect("Telegram did not accept it")
	term.answer("Bot token from @BotFather", telegramtest.Token)
	term.expect("send /start to @clawedge_bot")
	bot.Text(telegramtest.User{ID: 4242, FirstName: "Ada", Username: "ada"}, nil, "/start")
	term.expect("is user 4242, the owner")
	term.answer("a .gguf file, or none", model)
	term.answer("Add a remote model", "ollama")
	term.answer("Its name", "lan")
	term.answer("Base URL", lan.URL)
	term.answer("Model name", "qwen2.5:7b")
	term.answer("API key", apiKey)
	term.expect("lan: openai qwen2.5:7b answered")
	term.answer("Add a remote model", "none")
	<-term.done
	if err := cmd.Wait(); err != nil {
		t.Fatalf("setup: %v\n%s", err, term.output())
	}
	shown := term.output()
	if !strings.Contains(shown, "[ok  ] telegram: bot @clawedge_bot reachable") || !strings.Contains(shown, "[ok  ] remote model lan") ||
		!strings.Contains(shown, "[ok  ] local model: "+model) {
		t.Errorf("setup's doctor run:\n%s", shown)
	}
	for _, secret := range []string{telegramtest.Token, "123:wrong", apiKey} {
		if strings.Contains(shown, secret) {
			t.Errorf("the terminal showed the secret %q:\n%s", secret, shown)
		}
	}

	written, _ := os.ReadFile(cfgPath)
	env, _ := os.ReadFile(filepath.Join(dir, "clawedge.env"))
	if strings.Contains(string(written), telegramtest.Token) || strings.Contains(string(written), apiKey) ||
		!strings.Contains(string(env), telegramtest.Token) || !strings.Contains(string(env), apiKey) {
		t.Errorf("secrets belong in clawedge.env only:\nconfig:\n%s", written)
	}
	if fi, err := os.Stat(filepath.Join(dir, "clawedge.env")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("clawedge.env: %v %v", fi, err)
	}
	for _, want := range []string{"lamp: {gpio: 17, mode: out", "allow_users: [4242]", "path: \"" + model, "kind: openai", "api_key: ${LAN_API_KEY}", "# "} {
		if !strings.Contains(string(written), want) {
			t.Errorf("config lacks %q:\n%s", want, written)
		}
	}
	// The config checks out and doctor agrees, with the secrets from the
	// environment as the service would have them.
	t.Setenv("TELEGRAM_TOKEN", telegramtest.Token)
	t.Setenv("LAN_API_KEY", apiKey)
	runCLI(t, 0, "", "config", "check", cfgPath)
	if out := runCLI(t, 0, "", "doctor", "--config", cfgPath); !strings.Contains(out, "pin lamp") || strings.Contains(out, apiKey) {
		t.Errorf("doctor:\n%s", out)
	}

	// Re-run with --yes: the current config gives every answer, the old file
	// is kept as .bak.
	out := runCLI(t, 0, "", "setup", "--yes", "--config", cfgPath, "--telegram-api-url", bot.URL)
	again, _ := os.ReadFile(cfgPath)
	if bak, _ := os.ReadFile(cfgPath + ".bak"); !bytes.Equal(bak, written) || !bytes.Equal(again, written) {
		t.Errorf("re-run changed the config:\n%s\nwas:\n%s\n%s", again, written, out)
	}
}
