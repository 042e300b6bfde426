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
}

// TestAccessibility opens every page in chromium at a phone's width (360
// px) and a laptop's (1280 px): axe-core finds no violation of WCAG level A
// (its tags wcag2a, wcag21a), and the nav marks the page's own link, and
// only it, aria-current="page". With CLAWEDGE_WEB_SCREENSHOTS=DIR each page
// is saved there at both widths (docs/web/ holds the committed ones).
func TestAccessibility(t *testing.T) {
	bin := webtest.Chromium(t)
	axe := webtest.NewAxe(t)
	d := newDash(t, nil)
	d.srv.Sensors = newFakeSensors()
	d.models = []Model{{Name: "local", Model: "qwen2.5-1.5b-instruct-q4_k_m.gguf", Where: "on the board", Route: "answers", Calls: 3}}
	d.findings = []Finding{{What: "disk", Status: "warn", Info: "88% used", Fix: "remove unused models"}}
	code, _, err := d.srv.Sessions.Pair("phone", Owner)
	if err != nil {
		t.Fatal(err)
	}
	bctx := webtest.Start(t, bin)
	base := d.http.URL
	step := func() (context.Context, context.CancelFunc) { return context.WithTimeout(bctx, 30*time.Second) }
	ctx, cancel := step()
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
