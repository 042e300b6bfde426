package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// TestSetupPageDaemon: the setup page in Debian's chromium against the real
// daemon (the binary). A browser paired as an operator is refused when it
// writes, and the refusal is in the audit as web:tablet; an owner's browser
// checks the bot token (getMe on a fake Bot API), is found by its /start,
// names the pins and a remote model (tried with a one-token request on a
// fake server), and writes: the config passes `config check`, the previous
// one is kept, the daemon restarts itself with it (the page follows it
// until it answers again) and serves the new pins. No secret is in the
// config, the audit, the daemon's log or a page.
func TestSetupPageDaemon(t *testing.T) {
	bin := chromiumPath(t)
	bot := telegramtest.New(t)
	lan := openaitest.New(t)
	lan.Default(func(openaitest.Request) openaitest.Reply { return openaitest.Text("OK") })
	const apiKey = "sk-lan-SECRET-0123456789"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfgPath, _ := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nweb: {listen: %q}\npolicy: {owners: [\"web:phone\"]}\n"+
		"board:\n  driver: sim\n  pins:\n    led: {gpio: 17, mode: out}\n", addr))
	before, _ := os.ReadFile(cfgPath)
	cmd := exec.Command(binPath, "run", "--config", cfgPath)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cmd.Dir)
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	base := "http://" + addr
	waitUntil(t, "the dashboard", func() bool {
		resp, err := http.Get(base + "/pair")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	code := func(name, role string) string {
		out := runCLI(t, 0, "", "web", "pair", "--config", cfgPath, "--name", name, "--role", role)
		m := regexp.MustCompile(`code (\d{8})`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("web pair printed %q", out)
		}
		return m[1]
	}
	bctx := startBrowser(t, bin)
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()
	pair := func(code string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			return chromedp.Do(ctx, chromedp.Navigate(base+"/pair"),
				chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
				chromedp.Submit(chromedp.CSS(`#pair`)),
				chromedp.WaitVisible(chromedp.CSS(`dl.facts`)))
		})
	}
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.outerHTML`))
			t.Fatalf("%s: %v\n%s", sel, err, html)
		}
		return s
	}

	// An operator: the page, but the write is refused.
	err = chromedp.Do(ctx, pair(code("tablet", "operator")),
		chromedp.Navigate(base+"/setup"),
		chromedp.SetValue(chromedp.CSS(`#setup-write input[name=pins]`), "lamp=22:out"),
		chromedp.Submit(chromedp.CSS(`#setup-write`)),
		chromedp.WaitVisible(chromedp.CSS(`#status`)))
	if err != nil {
		t.Fatalf("the operator's write: %v", err)
	}
	if s := text(`#status`); !strings.Contains(s, "only an owner") {
		t.Errorf("the operator was told %q", s)
	}
	if now, _ := os.ReadFile(cfgPath); !bytes.Equal(now, before) {
		t.Fatalf("the operator's write changed the config:\n%s", now)
	}

	// The owner: the token, the /start, the rest, written.
	err = chromedp.Do(ctx, pair(code("phone", "owner")),
		chromedp.Navigate(base+"/setup"),
		chromedp.SendKeys(chromedp.CSS(`#setup-telegram input[name=token]`), telegramtest.Token),
		chromedp.SetValue(chromedp.CSS(`#setup-telegram input[name=api_url]`), bot.URL),
		chromedp.Submit(chromedp.CSS(`#setup-telegram`)),
		chromedp.WaitVisible(chromedp.CSS(`#setup-owner`)))
	if err != nil {
		t.Fatalf("the token step: %v", err)
	}
	if s := text(`#tg-bot`); !strings.Contains(s, "@clawedge_bot") {
		t.Errorf("the token step says %q", s)
	}
	bot.Text(telegramtest.User{ID: 4242, FirstName: "Ada", Username: "ada"}, nil, "/start")
	err = chromedp.Do(ctx,
		chromedp.Submit(chromedp.CSS(`#setup-owner`)),
		chromedp.WaitVisible(chromedp.CSS(`#tg-owner`)),
		chromedp.SetValue(chromedp.CSS(`#setup-write input[name=pins]`), "lamp=22:out door=27:in"),
		chromedp.SetValue(chromedp.CSS(`#setup-write select[name=remote]`), "set"),
		chromedp.SetValue(chromedp.CSS(`#setup-write input[name=remote_url]`), lan.URL),
		chromedp.SetValue(chromedp.CSS(`#setup-write input[name=remote_model]`), "qwen2.5:7b"),
		chromedp.SendKeys(chromedp.CSS(`#setup-write input[name=remote_key]`), apiKey),
		chromedp.Submit(chromedp.CSS(`#setup-write`)),
		chromedp.WaitVisible(chromedp.CSS(`#restart`)))
	if err != nil {
		t.Fatalf("the write: %v", err)
	}
	written := text(`#written`)
	// The page follows the restart: setup.js polls until a new daemon answers.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("restart").dataset.back === "true"`)); err != nil {
		html, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
		t.Log(html)
		t.Fatalf("the page did not see the daemon come back: %v (%s)\n%s", err, written, logs.String())
	}
	err = chromedp.Do(ctx, chromedp.Navigate(base+"/pins"), chromedp.WaitVisible(chromedp.CSS(`tr[data-pin="lamp"]`)))
	if err != nil {
		t.Fatalf("the daemon back with the new pins: %v", err)
	}
	page, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))

	cfg, _ := os.ReadFile(cfgPath)
	env, _ := os.ReadFile(filepath.Join(filepath.Dir(cfgPath), "clawedge.env"))
	if bak, _ := os.ReadFile(cfgPath + ".bak"); !bytes.Equal(bak, before) {
		t.Errorf("the previous config is not kept as .bak: %q", bak)
	}
	for _, want := range []string{"lamp: {gpio: 22, mode: out", "allow_users: [4242]", "api_url: \"" + bot.URL, "api_key: ${LAN_API_KEY}", "web:", "owners: [\"web:phone\"]"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("the config lacks %q:\n%s", want, cfg)
		}
	}
	t.Setenv("TELEGRAM_TOKEN", telegramtest.Token)
	t.Setenv("LAN_API_KEY", apiKey)
	runCLI(t, 0, "", "config", "check", cfgPath)
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "100")
	if !regexp.MustCompile(`web:tablet @setup/write\{[^\n]*-> failed: refused`).MatchString(audit) ||
		!regexp.MustCompile(`web:phone @setup/write\{[^\n]*-> ok`).MatchString(audit) {
		t.Errorf("the audit:\n%s", audit)
	}
	for _, secret := range []string{telegramtest.Token, apiKey} {
		for where, s := range map[string]string{"config": string(cfg), "audit": audit, "log": logs.String(), "page": page + written} {
			if strings.Contains(s, secret) {
				t.Errorf("the secret %q is in the %s", secret, where)
			}
		}
		if !strings.Contains(string(env), secret) {
			t.Errorf("clawedge.env lacks a secret")
		}
	}
}

// chromiumPath is Debian's chromium, or a skip (a failure under
// CLAWEDGE_REQUIRE_CHROMIUM=1, as the test command runs it).
func chromiumPath(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CLAWEDGE_REQUIRE_CHROMIUM") != "" {
			t.Fatal("chromium is not installed (apt-get install chromium) and CLAWEDGE_REQUIRE_CHROMIUM is set")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	return path
}

func startBrowser(t *testing.T, bin string) context.Context {
	t.Helper()
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(bin),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(390, 844))
	t.Cleanup(cancelA)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}
