package web

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/policy"
)

// chromium is Debian's headless browser, or a skip (a failure under
// CLAWEDGE_REQUIRE_CHROMIUM=1, as the test command runs it).
func chromium(t *testing.T) string {
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

// TestBrowser drives a real chromium: it pairs with a code on the pairing
// page, sees the pins, switches the led and sees the level pushed back by
// the event stream, reads its call in the audit as web:phone, sends a
// command that asks in the chat and approves it on the approvals page,
// pauses an automation. With
// CLAWEDGE_WEB_SCREENSHOTS=DIR it also saves each page at phone and desktop
// sizes there (docs/web/ holds the committed ones).
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	// web:phone's toggles ask a person: the chat's call waits for the
	// approvals page's button (an owner's browser may answer its own).
	d := newDash(t, &policy.Policy{Default: policy.Allow,
		Users: map[string]map[string]policy.Action{"web:phone": {"gpio/toggle": policy.Ask}}})
	code, _, err := d.srv.Sessions.Pair("phone", Owner)
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(bin),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(390, 844)}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// The first run starts the browser, which lives as long as its context:
	// no timeout on that one; every step after has 30 s at most.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	ctx, cancelT := context.WithTimeout(bctx, 30*time.Second)
	defer cancelT()

	base := d.http.URL
	led := chromedp.CSS(`tr[data-pin="led"] .level`)
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/pins"), // no session: sent to pairing
		chromedp.WaitVisible(chromedp.CSS(`#pair input[name=code]`)),
		chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
		chromedp.Submit(chromedp.CSS(`#pair`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.facts`)),
		chromedp.Navigate(base+"/pins"),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-pin="led"] .level[data-level="0"]`)),
		chromedp.Click(chromedp.CSS(`tr[data-pin="led"] button[data-write="1"]`)),
		// No reload: the level comes back through /api/events.
		chromedp.WaitVisible(chromedp.CSS(`tr[data-pin="led"] .level[data-level="1"]`)),
	)
	if err != nil {
		html, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.outerHTML`))
		t.Fatalf("pairing and switching in chromium: %v\n%s", err, html)
	}
	level, err := chromedp.Run(ctx, chromedp.Text(led))
	if err != nil || level != "1" || d.level() != hal.High {
		t.Fatalf("the page shows %q (%v), the board %v", level, err, d.level())
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/audit?caller=web:phone&tool=gpio/write"),
		chromedp.WaitVisible(chromedp.CSS(`#audit td.who`)))
	if err != nil {
		t.Fatalf("the audit page: %v", err)
	}
	who, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#audit td.who`)))
	command, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#audit td code`)))
	if who != "web:phone" || command != `@gpio/write{pin="led";value=1}` {
		t.Errorf("the audit shows %q %q", who, command)
	}

	// An automation paused from its page: the button's call, the page reloaded.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/automations"),
		chromedp.Click(chromedp.CSS(`tr[data-auto="porch"] button[data-tool="auto/pause"]`)),
		chromedp.WaitVisible(chromedp.CSS(`tr[data-auto="porch"] button[data-tool="auto/resume"]`)))
	if err != nil {
		t.Fatalf("pausing an automation: %v", err)
	}
	if l := d.sched.List(); len(l) != 1 || !l[0].Paused {
		t.Errorf("the scheduler: %+v", l)
	}

	// The chat: a command that asks; the approvals page, in a second tab,
	// approves it; the chat's reply shows the toggle ran.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/chat"),
		chromedp.WaitVisible(chromedp.CSS(`#chat input[name=text]`)),
		chromedp.SendKeys(chromedp.CSS(`#chat input[name=text]`), `@gpio/toggle{pin="led"}`),
		chromedp.Click(chromedp.CSS(`#chat button`)), // a click fires the form's submit event; Submit would not
		chromedp.WaitVisible(chromedp.CSS(`#chatlog li.board`)))
	if err != nil {
		t.Fatalf("the chat: %v", err)
	}
	tab, closeTab := chromedp.NewContext(bctx)
	defer closeTab()
	tctx, cancelTab := context.WithTimeout(tab, 30*time.Second)
	defer cancelTab()
	for deadline := time.Now().Add(30 * time.Second); len(d.auth.List()) == 0; {
		if time.Now().After(deadline) {
			t.Fatal("the chat's toggle asked nobody")
		}
		time.Sleep(5 * time.Millisecond)
	}
	err = chromedp.Do(tctx,
		chromedp.Navigate(base+"/approvals"),
		chromedp.Click(chromedp.CSS(`li[data-approval] button[data-approve="true"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#status`)))
	if err != nil {
		t.Fatalf("the approvals page: %v", err)
	}
	reply, err := chromedp.Run(ctx, chromedp.Poll[string](`(function(){var li=document.querySelector("#chatlog li.board");return li&&li.textContent.indexOf("led")>=0?li.textContent:""})()`))
	if err != nil || d.level() != hal.Low {
		t.Fatalf("the chat's reply %q (%v), the board %v", reply, err, d.level())
	}

	if dir := os.Getenv("CLAWEDGE_WEB_SCREENSHOTS"); dir != "" {
		screenshots(t, ctx, base, dir)
	}
}

// screenshots saves every page at a phone's and a desktop's size (quality 100: PNG).
func screenshots(t *testing.T, ctx context.Context, base, dir string) {
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 390, 844}, {"desktop", 1280, 800}} {
		for _, p := range []string{"overview", "pins", "approvals", "automations", "audit", "chat"} {
			path := "/" + p
			if p == "overview" {
				path = "/"
			}
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h), chromedp.Navigate(base+path),
				chromedp.WaitVisible(chromedp.CSS(`main h1`))); err != nil {
				t.Fatalf("screenshot %s: %v", p, err)
			}
			png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatalf("screenshot %s: %v", p, err)
			}
			name := filepath.Join(dir, strings.Join([]string{p, size.name}, "-")+".png")
			if err := os.WriteFile(name, png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
