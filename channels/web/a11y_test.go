package web

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/web/webtest"
)

// a11yPages are every page of the dashboard as a paired owner opens it:
// its path, the nav entry it marks current (its name in nav), and what
// shows the page is ready to check (a CSS selector). A new page is one line.
var a11yPages = []struct{ path, page, ready string }{
	{"/", "overview", "dl.facts"},
	{"/pins", "pins", `tr[data-pin="led"] .level`},
	{"/approvals", "approvals", "main h1"},
	{"/automations", "automations", `tr[data-auto="porch"]`},
	{"/audit", "audit", "#audit"},
	{"/models", "models", "main h1"},
	{"/chat", "chat", "#chat"},
	{"/sensors", "sensors", "section.sensor .chart:not([hidden]) canvas"},
	{"/goals", "goals", "section.goal"},
	{"/memory", "memory", "#entries-h"},
	{"/skills", "skills", "main h1"},
	{"/setup", "setup", "main h1"},
}

// TestAccessibility opens every page in chromium at a phone's width (360
// px) and a laptop's (1280 px): axe-core finds no violation of WCAG level A
// (its tags wcag2a, wcag21a), nothing is wider than the window, and the nav marks the page's own link, and
// only it, aria-current="page". With CLAWEDGE_WEB_SCREENSHOTS=DIR each page
// is saved there at both widths (docs/web/ holds the committed ones).
func TestAccessibility(t *testing.T) {
	bin := webtest.Chromium(t)
	axe := webtest.NewAxe(t)
	d := newDash(t, nil)
	d.srv.Sensors = newFakeSensors()
	d.srv.Goals = newFakeGoals(waitingGoal())
	d.srv.Memory = memFacts{d.mem}
	d.withSkills(t, d.srv.Runner.Registry)
	d.withSetup(t, d.srv.Runner.Registry)
	d.showcase()
	code, _, err := d.srv.Sessions.Pair("phone", Owner)
	if err != nil {
		t.Fatal(err)
	}
	bctx := webtest.Start(t, bin)
	base := d.http.URL
	step := func() (context.Context, context.CancelFunc) { return context.WithTimeout(bctx, 30*time.Second) }
	ctx, cancel := step()
	// The pairing page first: the one a stranger's browser sees, and the
	// first a new owner does (no nav: nothing is marked current).
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/pair"), chromedp.WaitVisible(chromedp.CSS(`#pair input[name=code]`))); err != nil {
		t.Fatalf("/pair: %v", err)
	}
	for _, size := range []webtest.Size{webtest.Phone, webtest.Desktop} {
		if err := webtest.Resize(ctx, size); err != nil {
			t.Fatal(err)
		}
		vs, err := axe.Check(ctx)
		if err != nil {
			t.Fatalf("/pair at %d px: %v", size.W, err)
		}
		for _, v := range vs {
			t.Errorf("/pair at %d px: %s", size.W, v)
		}
	}
	if err := webtest.Resize(ctx, webtest.Phone); err != nil {
		t.Fatal(err)
	}
	if err := webtest.Pair(ctx, base, code); err != nil {
		t.Fatalf("pairing: %v", err)
	}
	cancel()
	// Something in the audit, so that its page shows rows.
	if _, err := channels.Run(context.Background(), d.srv.Runner, Caller("phone", Owner), `@gpio/write{pin="led";value=1}`); err != nil {
		t.Fatal(err)
	}
	// The checker finds what it should: an image without a text
	// alternative and a button without a name break level A.
	ctx, cancel = step()
	err = chromedp.Do(ctx, chromedp.Navigate(`data:text/html,<!doctype html><html lang="en"><title>t</title><img src="x.png"><button></button></html>`))
	vs, cerr := axe.Check(ctx)
	cancel()
	if ids := violationIDs(vs); err != nil || cerr != nil || ids != "button-name image-alt" {
		t.Fatalf("axe-core on a page that breaks level A: %q (%v, %v)", ids, err, cerr)
	}
	shots := webtest.ShotsDir()
	for _, p := range a11yPages {
		ctx, cancel := step()
		err := chromedp.Do(ctx, chromedp.Navigate(base+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)))
		if err != nil {
			cancel()
			t.Errorf("%s: %v", p.path, err)
			continue
		}
		current, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.prototype.map.call(document.querySelectorAll("header nav a[aria-current]"), function (a) { return a.getAttribute("href") + " " + a.getAttribute("aria-current"); })`))
		if want := p.path + " page"; err != nil || len(current) != 1 || current[0] != want {
			t.Errorf("%s: nav links marked current %q (%v), want %q", p.path, current, err, want)
		}
		for _, size := range []webtest.Size{webtest.Phone, webtest.Desktop} {
			if err := webtest.Resize(ctx, size); err != nil {
				t.Fatal(err)
			}
			// Phone first: nothing wider than the window, no sideways scrolling.
			if wide, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); err != nil || wide > 0 {
				t.Errorf("%s at %d px: %d px wider than the window (%v)", p.path, size.W, wide, err)
			}
			vs, err := axe.Check(ctx)
			if err != nil {
				t.Fatalf("%s at %d px: %v", p.path, size.W, err)
			}
			for _, v := range vs {
				t.Errorf("%s at %d px: %s", p.path, size.W, v)
			}
		}
		if shots != "" {
			if err := os.MkdirAll(shots, 0o755); err != nil {
				t.Fatal(err)
			}
			webtest.Shot(t, ctx, shots, p.page, webtest.Phone, webtest.Desktop)
		}
		if err := webtest.Resize(ctx, webtest.Phone); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
}

func violationIDs(vs []webtest.Violation) string {
	var ids []string
	for _, v := range vs {
		ids = append(ids, v.ID)
	}
	slices.Sort(ids)
	return strings.Join(ids, " ")
}

// showcase fills the harness's facts as a board in use would show them:
// models, the overview's lines, doctor's findings (the screenshots').
func (d *dash) showcase() {
	d.models = []Model{
		{Name: "local", Model: "qwen2.5-1.5b-instruct-q4_k_m.gguf", Where: "on the board", Route: "answers first (local-first)", Calls: 12,
			LastSpeed: "prompt 812 tokens (768 cached) in 1.9s, 41 generated in 6.7s (6.1 tokens/s), first token after 2.1s", LastUsed: "2026-11-27 09:41"},
		{Name: "lan", Model: "qwen2.5:7b", Where: "192.168.1.5:11434", Route: "when the local model cannot (local-first)", Calls: 2,
			LastSpeed: "23.4 tokens/s over 2 replies", LastUsed: "2026-11-26 18:02"},
		{Name: "qwen3-0.6b-q8_0.gguf", Model: "qwen3 Q8_0 610 MB", Where: "on the board", Route: "installed, not configured"},
	}
	d.extra = []Fact{{Label: "Wi-Fi", Value: `wlan0 joined "Home", signal -52 dBm`}, {Label: "store", Value: "1.2 MB of 64 MB"},
		{Label: "model local", Value: "qwen2.5-1.5b-instruct-q4_k_m.gguf · 12 calls"},
		{Label: "last local reply", Value: "41 generated in 6.7s (6.1 tokens/s), first token after 2.1s"}}
	d.findings = []Finding{
		{What: "data_dir", Status: "ok", Info: "/var/lib/clawedge"},
		{What: "local model runner", Status: "ok", Info: "clawedge-llm b6500"},
		{What: "disk", Status: "warn", Info: "/var/lib/clawedge: 88% used, 3.4 GB free", Fix: "remove unused models (clawedge model rm NAME)"},
		{What: "clock", Status: "ok", Info: "synchronized"},
	}
}

// accessible fails t for each level A violation of the page ctx shows
// (where: which state of it); axe nil: no check (webtest.MaybeAxe).
func accessible(t *testing.T, ctx context.Context, axe *webtest.Axe, where string) {
	t.Helper()
	if axe == nil {
		return
	}
	vs, err := axe.Check(ctx)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, v := range vs {
		t.Errorf("%s: %s", where, v)
	}
}
