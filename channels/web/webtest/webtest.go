// Package webtest drives Debian's chromium for the dashboard's tests (the
// channels/web harness and the daemon's whole-stack tests): starting it,
// pairing, screenshots at a phone's and a laptop's width, and the
// accessibility check with axe-core (scripts/fetch-axe.sh). Tests only.
package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Required is set by the test command: a missing browser or checker is a
// failure, not a skip.
func required() bool { return os.Getenv("CLAWEDGE_REQUIRE_CHROMIUM") != "" }

// Chromium is Debian's headless browser, or a skip (a failure under
// CLAWEDGE_REQUIRE_CHROMIUM=1, as the test command runs it).
func Chromium(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("chromium")
	if err != nil {
		if required() {
			t.Fatal("chromium is not installed (apt-get install chromium) and CLAWEDGE_REQUIRE_CHROMIUM is set")
		}
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	return path
}

// Phone and Desktop are the widths every page is checked and shown at.
var (
	Phone   = Size{"phone", 360, 780}
	Desktop = Size{"desktop", 1280, 800}
)

// Size is a viewport.
type Size struct {
	Name string
	W, H int64
}

// Start starts a headless chromium for the test (extra: more flags) and
// returns its context, at the phone's size. The browser lives as long as
// the test: give each step a timeout of its own.
func Start(t testing.TB, bin string, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(bin),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(int(Phone.W), int(Phone.H))}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), append(opts, extra...)...)
	t.Cleanup(cancelA)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(Phone.W, Phone.H)); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}

// Pair pairs the browser with a code on the dashboard at base, as a person
// would: the pairing page's form.
func Pair(ctx context.Context, base, code string) error {
	return chromedp.Do(ctx,
		chromedp.Navigate(base+"/pair"),
		chromedp.WaitVisible(chromedp.CSS(`#pair input[name=code]`)),
		chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
		chromedp.Submit(chromedp.CSS(`#pair`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.facts`)))
}

// ShotsDir is where screenshots go (CLAWEDGE_WEB_SCREENSHOTS), "" for none.
func ShotsDir() string { return os.Getenv("CLAWEDGE_WEB_SCREENSHOTS") }

// Shot saves the page as it is, without reloading it, at each size to
// DIR/NAME-SIZE.png, then returns to the phone's size.
func Shot(t testing.TB, ctx context.Context, dir, name string, sizes ...Size) {
	t.Helper()
	for _, size := range sizes {
		if err := Resize(ctx, size); err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+size.Name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := Resize(ctx, Phone); err != nil {
		t.Fatal(err)
	}
}

// Resize sets the viewport to size and lets the page's charts, which follow
// the window's width, redraw.
func Resize(ctx context.Context, size Size) error {
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.W, size.H)); err != nil {
		return err
	}
	_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.dispatchEvent(new Event("resize"))`))
	return err
}

// axePath is where axe-core's script is: CLAWEDGE_AXE, or the copy
// scripts/fetch-axe.sh installs under third_party at the module's root.
func axePath() string {
	if path := os.Getenv("CLAWEDGE_AXE"); path != "" {
		return path
	}
	dir, _ := os.Getwd()
	for ; dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
	}
	return filepath.Join(dir, "third_party", "axe", "node_modules", "axe-core", "axe.min.js")
}

// MaybeAxe is the checker, or nil without axe-core (a failure when
// required): for a test that checks pages besides its own work.
func MaybeAxe(t testing.TB) *Axe {
	t.Helper()
	if _, err := os.Stat(axePath()); err != nil && !required() {
		return nil
	}
	return NewAxe(t)
}

func axeSource(t testing.TB) string {
	t.Helper()
	path := axePath()
	src, err := os.ReadFile(path)
	if err != nil {
		if required() {
			t.Fatalf("axe-core: %v (scripts/fetch-axe.sh installs it)", err)
		}
		t.Skipf("axe-core: %v (scripts/fetch-axe.sh installs it)", err)
	}
	return string(src)
}

// Violation is one axe-core rule a page breaks, with where.
type Violation struct {
	ID, Impact, Help string
	Nodes            []string // the offending elements' selectors and HTML
}

func (v Violation) String() string {
	return fmt.Sprintf("%s (%s): %s\n    %s", v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n    "))
}

// Axe is a checker of WCAG level A (axe-core's tags wcag2a, wcag21a) in
// chromium's pages.
type Axe struct{ src string }

// NewAxe reads axe-core (a skip without it, a failure when required).
func NewAxe(t testing.TB) *Axe { return &Axe{src: axeSource(t)} }

// Check injects axe-core into the page ctx shows (Runtime.evaluate: the
// page's CSP does not apply to it) and returns the level A rules it breaks.
func (a *Axe) Check(ctx context.Context) ([]Violation, error) {
	// Once a page: a resize keeps the page and axe-core in it.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof axe === "undefined" && (function () {`+a.src+"\n})() || true")); err != nil {
		return nil, fmt.Errorf("injecting axe-core: %w", err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag21a"]}}).then(function (r) {
  return JSON.stringify(r.violations.map(function (v) {
    return {ID: v.id, Impact: v.impact || "", Help: v.help, Nodes: v.nodes.map(function (n) { return n.target.join(" ") + ": " + n.html.slice(0, 160); })};
  }));
})`, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("running axe-core: %w", err)
	}
	var vs []Violation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		return nil, fmt.Errorf("axe-core's answer %q: %w", raw, err)
	}
	return vs, nil
}
