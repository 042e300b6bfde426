package web

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/skills/skilltest"
	"github.com/clawedge/clawedge/tools"
)

// dashSkills is the skills page's facts over a real skills folder, as the
// daemon's (daemon/web_skills.go) over data_dir/skills.
type dashSkills struct {
	m   *skills.Manager
	key ed25519.PrivateKey // the key skills.trust lists
}

func (k *dashSkills) Skills() ([]SkillInfo, []string) {
	list, errs := skills.LoadAll(k.m.Dir, k.m.Trust)
	var out []SkillInfo
	for _, s := range list {
		out = append(out, SkillInfo{Name: s.Name(), Description: s.Meta.Description, SignedBy: s.SignedBy, Tools: len(s.Tools), Granted: s.Granted,
			Declares: skills.Plan{Skill: s, SignedBy: s.SignedBy, Source: s.Dir}.Describe()})
	}
	var refused []string
	for _, e := range errs {
		refused = append(refused, e.Error())
	}
	return out, refused
}
func (k *dashSkills) Stage(r io.Reader) (string, error) { return k.m.Uploads.Stage(r) }
func (k *dashSkills) Discard(id string)                 { k.m.Uploads.Discard(id) }

// withSkills gives the dashboard a skills folder trusting one fresh key,
// and the skill/* tools on its runner.
func (d *dash) withSkills(t *testing.T, reg *tools.Registry) *dashSkills {
	t.Helper()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	dir := filepath.Join(t.TempDir(), "skills")
	k := &dashSkills{m: &skills.Manager{Dir: dir, Trust: skills.Trust{Keys: []ed25519.PublicKey{pub}}, Uploads: skills.Uploads{Dir: dir}}, key: priv}
	if err := skills.RegisterManage(reg, k.m); err != nil {
		t.Fatal(err)
	}
	d.srv.Skills = k
	return k
}

// archive is the skill "hello", with one tool that writes a folder, signed
// by key, packed as a publisher hands it over.
func helloArchive(t *testing.T, key ed25519.PrivateKey) []byte {
	t.Helper()
	dir, err := skilltest.Write(t.TempDir(), "hello", map[string]string{
		"SKILL.md":      "---\nname: hello\ndescription: Greets the household.\n---\n\nSay hi.\n",
		"tools.yaml":    "tools:\n  - name: hi\n    doc: Say hi.\n    run: [scripts/hi.sh]\n    write: [/tmp/hello-out]\n",
		"scripts/hi.sh": "#!/bin/sh\necho hi\n"}, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := skilltest.Archive(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// upload posts archive as the page's form does: csrf first, then the file.
func (b *browser) upload(archive []byte) (int, string) {
	b.d.t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	mw.WriteField(csrfField, b.csrf)
	fw, _ := mw.CreateFormFile("archive", "skill.tar.gz")
	fw.Write(archive)
	mw.Close()
	req, _ := http.NewRequest("POST", b.d.http.URL+skillsUploadPath, &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", b.d.http.URL)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.d.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// skillsDoor makes the door walk's call on a skills route: each reaches the
// authorizer once (an archive that is not one is refused by skill/check).
func (b *browser) skillsDoor(path string) (int, string) {
	switch path {
	case skillsUploadPath:
		return b.upload([]byte("not an archive"))
	case "/skills/install":
		return b.form(path, url.Values{"upload": {strings.Repeat("ab", 32)}})
	default:
		return b.form(path, url.Values{"name": {"nosuch"}})
	}
}

func installedSkills(t *testing.T, k *dashSkills) []string {
	list, _ := skills.LoadAll(k.m.Dir, k.m.Trust)
	var n []string
	for _, s := range list {
		n = append(n, s.Name())
	}
	return n
}

// Installing is an owner's, decided by the authorizer: an operator's
// browser may upload and read what a skill declares (skill/check), but its
// install is refused and audited as web:NAME; without a csrf field first
// the upload is refused before it is read; an upload over the bound is cut.
func TestSkillsOwnersOnly(t *testing.T) {
	d := newDash(t, &policy.Policy{Default: policy.Allow, Owners: []string{"web:phone"}})
	k := d.withSkills(t, d.srv.Runner.Registry)
	op := d.pair("tablet", Operator)
	status, body := op.upload(helloArchive(t, k.key))
	if status != 200 || !strings.Contains(body, "tool hello/hi") {
		t.Fatalf("an operator's check: %d %.300s", status, body)
	}
	id := between(body, `name="upload" value="`, `"`)
	status, body = op.form("/skills/install", url.Values{"upload": {id}})
	if status != http.StatusForbidden || !strings.Contains(body, "only an owner") {
		t.Fatalf("an operator's install: %d %.500s", status, body)
	}
	if n := installedSkills(t, k); len(n) != 0 {
		t.Fatalf("installed by an operator: %v", n)
	}
	refused := false
	for _, e := range d.audited() {
		refused = refused || e.Who == "web:tablet" && strings.HasPrefix(e.Command, "@skill/install") && e.Done && !e.OK && strings.Contains(e.Detail, "only an owner")
	}
	if !refused {
		t.Errorf("the operator's install is not audited as refused: %v", d.audited())
	}
	owner := d.pair("phone", Owner)
	if status, body = owner.form("/skills/install", url.Values{"upload": {id}, "grant": {"true"}}); status != 200 {
		t.Fatalf("the owner's install: %d %.500s", status, body)
	}
	if n := installedSkills(t, k); len(n) != 1 {
		t.Fatalf("after the owner's install: %v", n)
	}
	// A form whose first field is the file: refused by the guard, unread.
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("archive", "x.tar.gz")
	fw.Write([]byte("x"))
	mw.WriteField(csrfField, owner.csrf)
	mw.Close()
	req, _ := http.NewRequest("POST", d.http.URL+skillsUploadPath, &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.AddCookie(&http.Cookie{Name: cookieName, Value: owner.cookie})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("a file before the token: %d", resp.StatusCode)
	}
	// Over the bound: cut, refused, nothing kept.
	status, _ = owner.upload(bytes.Repeat([]byte("x"), maxUpload+1))
	if status != http.StatusBadRequest {
		t.Errorf("an upload over %d bytes: %d", maxUpload, status)
	}
	if m, _ := filepath.Glob(filepath.Join(k.m.Dir, ".upload-*")); len(m) != 0 {
		t.Errorf("uploads kept: %v", m)
	}
}

func between(s, from, to string) string {
	_, after, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, to)
	return v
}

// TestBrowserSkills: in chromium, an owner uploads a skill signed by a key
// the board does not trust: it is refused with the reason and nothing is
// installed; a trusted one shows its tool and the rights it declares, is
// not installed until the owner confirms, then is, granted; both calls are
// in the audit as web:phone. Plain forms: it runs without JavaScript.
func TestBrowserSkills(t *testing.T) {
	bin := chromium(t)
	d := newDash(t, &policy.Policy{Default: policy.Allow, Owners: []string{"web:phone"}})
	k := d.withSkills(t, d.srv.Runner.Registry)
	code, _, err := d.srv.Sessions.Pair("phone", Owner)
	if err != nil {
		t.Fatal(err)
	}
	_, stranger, _ := ed25519.GenerateKey(rand.Reader)
	files := t.TempDir()
	bad, good := filepath.Join(files, "bad.tar.gz"), filepath.Join(files, "good.tar.gz")
	os.WriteFile(bad, helloArchive(t, stranger), 0o644)
	os.WriteFile(good, helloArchive(t, k.key), 0o644)

	bctx := startChromium(t, bin, chromedp.Flag("blink-settings", "scriptEnabled=false"))
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	base := d.http.URL
	var status string
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/pair"),
		chromedp.SendKeys(chromedp.CSS(`#pair input[name=code]`), code),
		chromedp.Submit(chromedp.CSS(`#pair`)),
		chromedp.WaitVisible(chromedp.CSS(`dl.facts`)),
		chromedp.Navigate(base+"/skills"),
		chromedp.SetUploadFiles(chromedp.CSS(`#skill-upload input[name=archive]`), []string{bad}),
		chromedp.Submit(chromedp.CSS(`#skill-upload`)),
		chromedp.WaitVisible(chromedp.CSS(`#status`)))
	if err == nil {
		status, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#status`)))
	}
	if err != nil {
		t.Fatalf("uploading the untrusted skill: %v", err)
	}
	if !strings.Contains(status, "not installed") || !strings.Contains(status, "signed by a key skills.trust does not list") {
		t.Errorf("the refusal shows %q", status)
	}
	if n := installedSkills(t, k); len(n) != 0 {
		t.Fatalf("installed: %v", n)
	}
	var plan string
	err = chromedp.Do(ctx,
		chromedp.SetUploadFiles(chromedp.CSS(`#skill-upload input[name=archive]`), []string{good}),
		chromedp.Submit(chromedp.CSS(`#skill-upload`)),
		chromedp.WaitVisible(chromedp.CSS(`#plan`)))
	if err == nil {
		plan, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#plan`)))
	}
	if err != nil {
		t.Fatalf("uploading the trusted skill: %v", err)
	}
	for _, want := range []string{"signed by ed25519:", "tool hello/hi", "writes  /tmp/hello-out", "network none"} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan shown lacks %q:\n%s", want, plan)
		}
	}
	if n := installedSkills(t, k); len(n) != 0 {
		t.Fatalf("installed before the owner confirmed: %v", n)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#skill-install input[name=grant]`)),
		chromedp.Submit(chromedp.CSS(`#skill-install`)),
		chromedp.WaitVisible(chromedp.CSS(`li[data-skill="hello"]`)))
	if err != nil {
		t.Fatalf("confirming: %v", err)
	}
	list, _ := skills.LoadAll(k.m.Dir, k.m.Trust)
	if len(list) != 1 || list[0].Name() != "hello" || !list[0].Granted {
		t.Fatalf("after the confirmation: %+v", list)
	}
	var check, install bool
	for _, e := range d.audited() {
		check = check || e.Who == "web:phone" && strings.HasPrefix(e.Command, "@skill/check") && !e.OK
		install = install || e.Who == "web:phone" && strings.HasPrefix(e.Command, "@skill/install") && e.OK
	}
	if !check || !install {
		t.Errorf("the audit lacks the refused check (%v) or the install (%v) by web:phone", check, install)
	}
	if dir := os.Getenv("CLAWEDGE_WEB_SCREENSHOTS"); dir != "" {
		shot(t, ctx, dir, "skills", true)
	}
}
