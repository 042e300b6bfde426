package web

import (
	"context"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// fakeSetup is the setup package's side as the page sees it: facts, held
// secrets, and board-only tools with setup/*'s names and parameters that
// record what they were called with (the real ones are the setup
// package's, tested with the real daemon in cmd/clawedge).
type fakeSetup struct {
	mu      sync.Mutex
	held    map[string]string
	calls   []string // tool and its arguments as the tool got them
	started time.Time
	pull    *SetupPull
}

func (f *fakeSetup) Setup() SetupView {
	f.mu.Lock()
	defer f.mu.Unlock()
	return SetupView{Config: "/etc/clawedge/clawedge.yaml", Driver: "sim", Pins: "led=17:out", Memory: "1 GB",
		Models: []SetupModel{{Name: "qwen2.5-0.5b-q4_k_m", About: "Qwen2.5-0.5B-Instruct Q4_K_M, 469 MB"}}, Pull: f.pull}
}
func (f *fakeSetup) Hold(secret string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held == nil {
		f.held = map[string]string{}
	}
	ref := "held:" + strings.Repeat("a", len(f.held)+1)
	f.held[ref] = secret
	return ref
}
func (f *fakeSetup) Started() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

type fakeSetupTool struct {
	f    *fakeSetup
	spec grammar.ToolSpec
	out  tools.Result
}

func (fakeSetupTool) BoardOnly()               {}
func (t fakeSetupTool) Spec() grammar.ToolSpec { return t.spec }
func (t fakeSetupTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.f.calls = append(t.f.calls, t.spec.Name+" "+a.String("token")+a.String("telegram")+" "+a.String("pins")+" "+a.String("remote_key"))
	return t.out, nil
}

func (d *dash) withSetup(t *testing.T, reg *tools.Registry) *fakeSetup {
	t.Helper()
	f := &fakeSetup{started: time.Now()}
	s := func(n string) grammar.ArgSpec {
		return grammar.ArgSpec{Name: n, Type: grammar.TypeString, MaxLen: 1024}
	}
	i := func(n string) grammar.ArgSpec { return grammar.ArgSpec{Name: n, Type: grammar.TypeInteger} }
	err := reg.Register(
		fakeSetupTool{f, grammar.ToolSpec{Name: "setup/telegram", Params: []grammar.ArgSpec{s("token"), s("api_url")}},
			tools.Result{Text: "the token works: this is @board_bot", Fields: map[string]grammar.Value{"bot": grammar.StringValue("board_bot")}}},
		fakeSetupTool{f, grammar.ToolSpec{Name: "setup/owner", Params: []grammar.ArgSpec{s("token"), s("api_url"), i("since")}},
			tools.Result{Text: "got it: ada is user 4242, the owner", Fields: map[string]grammar.Value{"owner": grammar.IntValue(4242)}}},
		fakeSetupTool{f, grammar.ToolSpec{Name: "setup/write", Params: []grammar.ArgSpec{s("driver"), s("pins"), s("ports"), s("buses"), s("telegram"), s("api_url"),
			i("owner"), s("local"), s("remote"), s("remote_name"), s("remote_kind"), s("remote_url"), s("remote_model"), s("remote_key")}},
			tools.Result{Text: "Wrote /etc/clawedge/clawedge.yaml; the daemon restarts with it"}},
		fakeSetupTool{f, grammar.ToolSpec{Name: "setup/pull", Params: []grammar.ArgSpec{s("name")}},
			tools.Result{Text: "downloading qwen2.5-0.5b-q4_k_m"}})
	if err != nil {
		t.Fatal(err)
	}
	d.srv.Setup = f
	return f
}

// setupDoor makes the door walk's call on a setup route.
func (b *browser) setupDoor(path string) (int, string) {
	return b.form(path, url.Values{"token": {"123:secret"}, "driver": {"sim"}, "pins": {"led=17:out"}, "model": {"qwen2.5-0.5b-q4_k_m"}})
}

// The page's steps as an owner's browser makes them: the token typed is
// held and the calls carry its handle, so the secret is in no call, no
// audit entry and no page; the owner found goes into the write. An
// operator's step is refused by the authorizer (board-only) and audited.
func TestSetupPage(t *testing.T) {
	d := newDash(t, &policy.Policy{Default: policy.Allow, Owners: []string{"web:phone"}})
	f := d.withSetup(t, d.srv.Runner.Registry)
	const token, key = "123456:TOKEN-never-shown", "sk-KEY-never-shown"
	op := d.pair("tablet", Operator)
	status, body := op.form("/setup/write", url.Values{"driver": {"sim"}, "pins": {"lamp=22:out"}, "telegram": {"none"}})
	if status != http.StatusForbidden || !strings.Contains(body, "only an owner") {
		t.Fatalf("an operator's write: %d %.400s", status, body)
	}
	owner := d.pair("phone", Owner)
	status, body = owner.form("/setup/telegram", url.Values{"token": {token}, "api_url": {"http://127.0.0.1:1"}})
	if status != 200 || !strings.Contains(body, "@board_bot") || !strings.Contains(body, `id="setup-owner"`) {
		t.Fatalf("the token step: %d %.600s", status, body)
	}
	ref := between(body, `name="token_ref" value="`, `"`)
	since := between(body, `name="since" value="`, `"`)
	status, body = owner.form("/setup/owner", url.Values{"token_ref": {ref}, "bot": {"board_bot"}, "api_url": {"http://127.0.0.1:1"}, "since": {since}})
	if status != 200 || !strings.Contains(body, "user 4242") || !strings.Contains(body, `name="owner" inputmode="numeric" value="4242"`) {
		t.Fatalf("the owner step: %d %.600s", status, body)
	}
	status, body = owner.form("/setup/write", url.Values{"token_ref": {ref}, "bot": {"board_bot"}, "api_url": {"http://127.0.0.1:1"},
		"driver": {"sim"}, "pins": {"lamp=22:out"}, "telegram": {"new"}, "owner": {"4242"}, "local": {"none"},
		"remote": {"set"}, "remote_name": {"lan"}, "remote_kind": {"openai"}, "remote_url": {"http://127.0.0.1:2/v1"}, "remote_model": {"m"}, "remote_key": {key}})
	if status != 200 || !strings.Contains(body, `id="restart" data-started="`) || !strings.Contains(body, "/static/setup.js") {
		t.Fatalf("the write: %d %.600s", status, body)
	}
	f.mu.Lock()
	calls := strings.Join(f.calls, "\n")
	f.mu.Unlock()
	if !strings.Contains(calls, "setup/write "+ref+" lamp=22:out held:") {
		t.Errorf("the tools got:\n%s", calls)
	}
	for _, secret := range []string{token, key} {
		for _, e := range d.audited() {
			if strings.Contains(e.String(), secret) {
				t.Errorf("a secret in the audit: %v", e)
			}
		}
		if strings.Contains(calls+body, secret) {
			t.Errorf("a secret in a call or the page: %q", secret)
		}
	}
	// A download: started by a call, its progress on the page and in /api/setup.
	if status, body = owner.form("/setup/pull", url.Values{"model": {"qwen2.5-0.5b-q4_k_m"}}); status != 200 || !strings.Contains(body, "downloading") {
		t.Fatalf("the download: %d %.300s", status, body)
	}
	f.mu.Lock()
	f.pull = &SetupPull{Name: "qwen2.5-0.5b-q4_k_m", Done: 1 << 20, Total: 4 << 20}
	f.mu.Unlock()
	if resp, page := owner.do("GET", "/setup", ""); resp.StatusCode != 200 || !strings.Contains(page, `<progress max="4194304" value="1048576">`) || strings.Contains(page, `id="setup-pull"`) {
		t.Errorf("the page during the download: %.2000s", page)
	}
	// /api/setup says which daemon answers, for the page to see the restart.
	resp, raw := owner.do("GET", "/api/setup", "")
	if resp.StatusCode != 200 || !strings.Contains(raw, f.started.UTC().Format(time.RFC3339Nano)) || !strings.Contains(raw, `"done":1048576`) {
		t.Errorf("/api/setup: %d %s", resp.StatusCode, raw)
	}
}

// TestBrowserSetup: the setup page in chromium at a phone's width (360
// px), with JavaScript: nothing is wider than the screen, a download's
// progress follows /api/setup and the page reloads when it ended, and after
// a write the page follows the restart until a new daemon answers.
func TestBrowserSetup(t *testing.T) {
	bin := chromium(t)
	d := newDash(t, &policy.Policy{Default: policy.Allow, Owners: []string{"web:phone"}})
	f := d.withSetup(t, d.srv.Runner.Registry)
	code, _, err := d.srv.Sessions.Pair("phone", Owner)
	if err != nil {
		t.Fatal(err)
	}
	bctx := startChromium(t, bin, chromedp.WindowSize(360, 780))
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	base := d.http.URL
	f.mu.Lock()
	f.pull = &SetupPull{Name: "qwen2.5-0.5b-q4_k_m", Done: 1 << 20, Total: 4 << 20}
	f.mu.Unlock()
	err = chromedp.Do(ctx, chromedp.EmulateViewport(360, 780),
		chromedp.Navigate(base+"/pair"),
		chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
		chromedp.Submit(chromedp.CSS(`#pair`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.facts`)),
		chromedp.Navigate(base+"/setup"),
		chromedp.WaitVisible(chromedp.CSS(`#setup-write`)))
	if err != nil {
		t.Fatalf("the setup page: %v", err)
	}
	for _, page := range []string{"/setup", "/skills"} {
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
		if err != nil || wide {
			t.Errorf("%s is wider than a 360 px screen (%v)", page, err)
		}
		if page == "/setup" {
			if dir := os.Getenv("CLAWEDGE_WEB_SCREENSHOTS"); dir != "" {
				shot(t, ctx, dir, "setup", true)
				chromedp.Do(ctx, chromedp.EmulateViewport(360, 780))
			}
			// The download moves on, then ends: the page follows and reloads.
			f.mu.Lock()
			f.pull = &SetupPull{Name: "qwen2.5-0.5b-q4_k_m", Done: 3 << 20, Total: 4 << 20}
			f.mu.Unlock()
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#pull progress").value === 3145728`)); err != nil {
				t.Errorf("the progress did not follow: %v", err)
			}
			f.mu.Lock()
			f.pull = &SetupPull{Name: "qwen2.5-0.5b-q4_k_m", Done: 4 << 20, Total: 4 << 20, Finished: true}
			f.mu.Unlock()
			// The reload cuts a poll short: poll again until the new page says so.
			for deadline := time.Now().Add(20 * time.Second); ; {
				_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector("#pull") && document.querySelector("#pull").dataset.finished === "true"`))
				if err == nil {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the page did not reload when the download ended: %v", err)
				}
			}
			chromedp.Do(ctx, chromedp.Navigate(base+"/skills"), chromedp.WaitVisible(chromedp.CSS(`main h1`)))
		}
	}
	// A write: the page follows the restart (a new start time) and says so.
	err = chromedp.Do(ctx, chromedp.Navigate(base+"/setup"),
		chromedp.SetValue(chromedp.CSS(`#setup-write input[name=pins]`), "lamp=22:out"),
		chromedp.Submit(chromedp.CSS(`#setup-write`)),
		chromedp.WaitVisible(chromedp.CSS(`#restart`)))
	if err != nil {
		t.Fatalf("the write: %v", err)
	}
	f.mu.Lock()
	f.started = f.started.Add(time.Second)
	f.mu.Unlock()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("restart").dataset.back === "true"`)); err != nil {
		t.Fatalf("the page did not follow the restart: %v", err)
	}
}
