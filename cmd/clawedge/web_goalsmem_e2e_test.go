package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// dashChromium is Debian's headless chromium, or a skip (a failure under
// CLAWEDGE_REQUIRE_CHROMIUM=1, as the test command runs it).
func dashChromium(t *testing.T) string {
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

// dashClient is a paired browser as a Go client: its cookie and token.
type dashClient struct {
	t            *testing.T
	base         string
	cookie, csrf string
}

// pairDash pairs name with role through `clawedge web pair` and the API.
func pairDash(t *testing.T, base, cfgPath, name, role string) *dashClient {
	t.Helper()
	code := dashPairCode(t, cfgPath, name, role)
	resp, err := http.Post(base+"/api/session", "application/json", strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	csrf := regexp.MustCompile(`"csrf":"([0-9a-f]+)"`).FindStringSubmatch(string(raw))
	if resp.StatusCode != 200 || csrf == nil || len(resp.Cookies()) != 1 {
		t.Fatalf("pairing %s: %d %s", name, resp.StatusCode, raw)
	}
	return &dashClient{t: t, base: base, cookie: resp.Cookies()[0].Value, csrf: csrf[1]}
}

func dashPairCode(t *testing.T, cfgPath, name, role string) string {
	t.Helper()
	out := runCLI(t, 0, "", "web", "pair", "--config", cfgPath, "--name", name, "--role", role)
	code := regexp.MustCompile(`code (\d{8})`).FindStringSubmatch(out)
	if code == nil {
		t.Fatalf("web pair printed %q", out)
	}
	return code[1]
}

// form posts a page's form as a browser without JavaScript does.
func (c *dashClient) form(path string, v url.Values) (int, string) {
	c.t.Helper()
	v.Set("csrf", c.csrf)
	req, _ := http.NewRequest("POST", c.base+path, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.base)
	req.AddCookie(&http.Cookie{Name: "clawedge_session", Value: c.cookie})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestWebGoalsMemoryDaemon runs the daemon with its dashboard and a scripted
// planner, and a real chromium paired as an owner's browser (web:laptop,
// named in policy.owners): a goal set on the goals page shows its plan's
// steps change state, and the goal end done, with no reload (the event
// stream); on the memory page an entry is saved, found and forgotten — gone
// from MEMORY.md, the forget in the audit as web:laptop; SOUL.md is
// rewritten from the page. A viewer's set, cancel and forget, and an
// operator's SOUL.md, are refused by the authorizer and audited.
func TestWebGoalsMemoryDaemon(t *testing.T) {
	bin := dashChromium(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	model := openaitest.New(t)
	var score atomic.Int32
	goalModel(model, `@goal/wait{seconds=2} -> @gpio/write{pin="led";value=1}`, &score)
	cfgPath, dataDir := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nweb: {listen: %q}\ngoals: {poll: 50ms}\npolicy: {owners: [\"web:laptop\"]}\n", addr)+remoteConfig(model, ""))
	runInProcess(t, cfgPath, "warn")
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/pair")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	code := dashPairCode(t, cfgPath, "laptop", "owner")

	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(bin),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(390, 844)}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	bctx, cancelB := chromedp.NewContext(actx)
	defer cancelB()
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	dump := func() string {
		html, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.href + "\n" + document.body.outerHTML`))
		return html
	}

	// The goal, set on the page: the form's post, then the page it answers.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/pair"),
		chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
		chromedp.Submit(chromedp.CSS(`#pair`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.facts`)),
		chromedp.Navigate(base+"/goals"),
		chromedp.SendKeys(chromedp.CSS(`#goal-add input[name=text]`), "switch the led on after a pause"),
		chromedp.SendKeys(chromedp.CSS(`#goal-add input[name=until]`), `@gpio/read{pin="led"} is high`),
		chromedp.Click(chromedp.CSS(`#goal-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="1"]`)),
	)
	if err != nil {
		t.Fatalf("setting a goal on the page: %v\n%s", err, dump())
	}
	// From here the page is never loaded again: a mark on its window stays.
	first, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.stayed = "yes";
		(document.querySelector('section[data-goal="1"] li[data-step="2"]') || {dataset: {state: "none"}}).dataset.state`))
	if err != nil || first == "done" {
		t.Fatalf("step 2 is %q (%v) before the page could follow it: the plan's wait is too short", first, err)
	}
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="1"] li[data-step="1"][data-state="done"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="1"] li[data-step="2"][data-state="done"]`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="1"][data-state="done"]`)),
	)
	if err != nil {
		t.Fatalf("the steps did not change state on the page: %v\n%s", err, dump())
	}
	if stayed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.stayed || "reloaded"`)); err != nil || stayed != "yes" {
		t.Errorf("the page was reloaded (%q, %v): the steps must change by the event stream", stayed, err)
	}
	if text, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`section[data-goal="1"] .reading`))); !strings.Contains(text, "high (holds)") {
		t.Errorf("the last reading: %q", text)
	}
	dashShots(t, ctx, "goals")

	// A goal whose plan asks its owner: the question's field appears on the
	// page as the step waits (no reload), the answer is goal/answer by
	// web:laptop, and the plan goes on to done.
	score.Store(10)
	goalModel(model, `@goal/ask{question="which lamp, the porch or the hall?"} -> @gpio/write{pin="led";value=0}`, &score)
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#goal-add input[name=text]`), "switch the right lamp off"),
		chromedp.Click(chromedp.CSS(`#goal-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="2"]`)),
	)
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Evaluate[string](`window.stayed = "yes"`))
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`section[data-goal="2"] form.answer input[name=text]`)))
	}
	if err != nil {
		t.Fatalf("the question on the page: %v\n%s", err, dump())
	}
	if stayed, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.stayed || "reloaded"`)); err != nil || stayed != "yes" {
		t.Errorf("the page was reloaded before the question showed (%q, %v)", stayed, err)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`section[data-goal="2"] form.answer input[name=text]`), "the porch"),
		chromedp.Click(chromedp.CSS(`section[data-goal="2"] form.answer button`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="2"][data-state="done"]`)),
	)
	if err != nil {
		t.Fatalf("answering on the page: %v\n%s", err, dump())
	}
	if out := runCLI(t, 0, "", "goal", "show", "2", "--config", cfgPath); !strings.Contains(out, "answered: the porch") || !strings.Contains(out, "done") {
		t.Errorf("goal 2 after the answer:\n%s", out)
	}
	// A goal that would wait an hour, cancelled from the page.
	goalModel(model, `@goal/wait{seconds=3600}`, &score)
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`#goal-add input[name=text]`), "wait for the postman"),
		chromedp.Click(chromedp.CSS(`#goal-add button`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="3"] li[data-step="1"][data-state="waiting"]`)),
		chromedp.Click(chromedp.CSS(`section[data-goal="3"] form.cancel button`)),
		chromedp.WaitVisible(chromedp.CSS(`section[data-goal="3"][data-state="cancelled"]`)),
	)
	if err != nil {
		t.Fatalf("cancelling on the page: %v\n%s", err, dump())
	}
	if out := runCLI(t, 0, "", "goal", "show", "3", "--config", cfgPath); !strings.Contains(out, "cancelled by web:laptop") {
		t.Errorf("goal 3 after the cancel:\n%s", out)
	}
	if audit := runCLI(t, 0, "", "audit", "--config", cfgPath); !strings.Contains(audit, "web:laptop") || !strings.Contains(audit, `@goal/add{objective="switch the led on after a pause";until=`) {
		t.Errorf("the goal's setting is not in the audit as web:laptop:\n%s", audit)
	}

	// Memory: saved, found and forgotten on the page.
	memFile := filepath.Join(dataDir, "workspace", "MEMORY.md")
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/memory"),
		chromedp.SendKeys(chromedp.CSS(`#memory-save input[name=text]`), "the spare key is under the blue pot"),
		chromedp.Click(chromedp.CSS(`#memory-save button`)),
		chromedp.WaitVisible(chromedp.CSS(`#entries li[data-entry="1"]`)),
		chromedp.SendKeys(chromedp.CSS(`#memory-search input[name=q]`), "blue pot"),
		chromedp.Submit(chromedp.CSS(`#memory-search`)),
		// The search's answer, not the page before it.
		chromedp.WaitVisible(chromedp.CSS(`#memory-search input[name=q][value="blue pot"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#entries li[data-entry="1"] button`)),
	)
	if err != nil {
		t.Fatalf("saving and finding on the memory page: %v\n%s", err, dump())
	}
	if raw, _ := os.ReadFile(memFile); !strings.Contains(string(raw), "the spare key is under the blue pot") {
		t.Fatalf("MEMORY.md after the save:\n%s", raw)
	}
	dashShots(t, ctx, "memory")
	// A viewer's forget of it is refused, audited, and changes nothing.
	wall := pairDash(t, base, cfgPath, "wall", "viewer")
	if st, body := wall.form("/memory/1/forget", url.Values{}); st != http.StatusForbidden {
		t.Errorf("a viewer's forget: %d %.300s", st, body)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#entries li[data-entry="1"] button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#entries li[data-entry="1"]`)),
	)
	if err != nil {
		t.Fatalf("forgetting on the memory page: %v\n%s", err, dump())
	}
	if raw, _ := os.ReadFile(memFile); strings.Contains(string(raw), "blue pot") {
		t.Errorf("MEMORY.md still holds the forgotten entry:\n%s", raw)
	}
	trail := runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "200")
	for _, want := range []string{`web/web:laptop @memory/forget{id=1} -> ok`, `web/web:wall @memory/forget{id=1} -> failed: refused`} {
		if !strings.Contains(trail, want) {
			t.Errorf("the audit lacks %s:\n%s", want, trail)
		}
	}

	// SOUL.md: written from an owner's page, refused for an operator.
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#persona-soul textarea`)),
		chromedp.SetValue(chromedp.CSS(`#persona-soul textarea`), "You are the garage's calm assistant."),
		chromedp.Click(chromedp.CSS(`#persona-soul button`)),
		// The page comes back with the file as written (the form's 303).
		chromedp.WaitVisible(chromedp.CSS(`#persona-soul textarea[data-bytes="36"]`)),
	)
	if err != nil {
		t.Fatalf("SOUL.md on the memory page: %v\n%s", err, dump())
	}
	soul := filepath.Join(dataDir, "workspace", "SOUL.md")
	if raw, _ := os.ReadFile(soul); string(raw) != "You are the garage's calm assistant.\n" {
		t.Errorf("SOUL.md: %q", raw)
	}
	phone := pairDash(t, base, cfgPath, "phone", "operator")
	if st, body := phone.form("/memory/soul", url.Values{"text": {"Obey everyone."}}); st != http.StatusForbidden || !strings.Contains(body, "paired as operator") {
		t.Errorf("an operator's SOUL.md: %d %.300s", st, body)
	}
	if raw, _ := os.ReadFile(soul); string(raw) != "You are the garage's calm assistant.\n" {
		t.Errorf("SOUL.md after the operator's post: %q", raw)
	}

	// A viewer sets and cancels no goal and saves nothing: refused by the
	// authorizer (the policy's role layer, or the goal's owner), audited.
	if st, body := wall.form("/goals", url.Values{"text": {"open the gate"}}); st != http.StatusForbidden {
		t.Errorf("a viewer's goal: %d %.300s", st, body)
	}
	if st, body := wall.form("/goals/1/cancel", url.Values{}); st != http.StatusForbidden {
		t.Errorf("a viewer's cancel: %d %.300s", st, body)
	}
	if st, body := wall.form("/memory", url.Values{"text": {"the alarm is off"}}); st != http.StatusForbidden {
		t.Errorf("a viewer's save: %d %.300s", st, body)
	}
	trail = runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "200")
	for _, want := range []string{`web/web:wall @goal/add{objective="open the gate"} -> failed: refused`, `web/web:wall @goal/cancel{id="1"} -> failed: refused`, `web/web:wall @memory/save{text="the alarm is off"} -> failed: refused`,
		`web/web:phone @memory/persona{file="soul";text="Obey everyone."} -> failed: refused`} {
		if !strings.Contains(trail, want) {
			t.Errorf("the audit lacks %s:\n%s", want, trail)
		}
	}
}

// dashShots saves the page as it is, at 360 and 1280 px wide, into
// $CLAWEDGE_WEB_SCREENSHOTS when set (docs/web/ holds the committed ones):
// the goals and memory pages with what this test put on them.
func dashShots(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("CLAWEDGE_WEB_SCREENSHOTS")
	if dir == "" {
		return
	}
	for _, size := range []struct {
		name string
		w, h int64
	}{{"phone", 360, 780}, {"desktop", 1280, 800}} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(size.w, size.h)); err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+size.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
}
