package web

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// pageTools registers the tools the goals and memory pages call on reg: the
// goal/* tools (no runtime here: they answer that goals run in the daemon;
// page_goals_test.go's tests give them none either, the daemon's test does)
// and the memory/* tools over a real workspace, which it returns.
func pageTools(t testing.TB, reg *tools.Registry) *memory.Workspace {
	t.Helper()
	if err := goals.RegisterTools(reg, &goals.Handle{}); err != nil {
		t.Fatal(err)
	}
	ws, err := memory.Open(filepath.Join(t.TempDir(), "workspace"), memory.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := memory.Register(reg, ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

// memFacts is the daemon's MemoryFacts (daemon/web_memory.go) over d.mem.
type memFacts struct{ w *memory.Workspace }

func (f memFacts) Entries(c tools.Caller) ([]MemoryEntry, error) {
	es, err := f.w.ListAs(c)
	return memEntries(es), err
}
func (f memFacts) Search(c tools.Caller, q string, n int) ([]MemoryEntry, error) {
	es, err := f.w.SearchAs(c, q, n)
	return memEntries(es), err
}
func (f memFacts) Persona() (string, string, error) {
	s, u, _, err := f.w.Persona()
	return s, u, err
}
func memEntries(es []memory.Entry) []MemoryEntry {
	out := make([]MemoryEntry, len(es))
	for i, e := range es {
		out[i] = MemoryEntry{ID: e.ID, Date: e.Date, Author: e.Author(), Shared: e.Shared != "", Tags: e.Tags, Text: e.Text}
	}
	return out
}

// newestEntry is the newest audit entry.
func (d *dash) newestEntry() (who, command, detail string, ok bool) {
	d.t.Helper()
	es := d.audited()
	if len(es) == 0 {
		d.t.Fatal("the audit is empty")
	}
	e := es[len(es)-1]
	return e.Who, e.Command, e.Detail, e.OK
}

// TestMemoryPage: an operator's browser saves from the page (memory/save by
// web:phone, in MEMORY.md with its author), finds it with the search, sees
// it listed with who and when, and forgets it (gone from the file, the
// forget audited as web:phone); a viewer's forget is refused by the
// authorizer and audited; another browser does not see phone's entry. SOUL.md
// is written by an owner's browser that policy.owners names (atomically,
// the old file replaced), refused for an operator's, whose form is not shown.
func TestMemoryPage(t *testing.T) {
	d := newDash(t, &policy.Policy{Default: policy.Allow, Owners: []string{"web:laptop"}})
	d.srv.Memory = memFacts{d.mem}
	phone, viewer, laptop := d.pair("phone", Operator), d.pair("wall", Viewer), d.pair("laptop", Owner)
	file := filepath.Join(d.mem.Dir, memory.MemoryFile)

	if st, body := phone.form("/memory", url.Values{"text": {"The gate <code> is 4711"}, "tags": {"garage"}}); st != 303 {
		t.Fatalf("save: %d %s", st, body)
	}
	raw, _ := os.ReadFile(file)
	if !strings.Contains(string(raw), "The gate <code> is 4711") || !strings.Contains(string(raw), "web:phone") {
		t.Fatalf("MEMORY.md after the save:\n%s", raw)
	}
	if who, cmd, _, ok := d.newestEntry(); who != "web:phone" || !strings.HasPrefix(cmd, "@memory/save{") || !ok {
		t.Errorf("the save's audit: %s %s %v", who, cmd, ok)
	}
	phone.form("/memory", url.Values{"text": {"the porch lamp is on a timer"}})
	_, page := phone.do("GET", "/memory", "")
	if !strings.Contains(page, "The gate &lt;code&gt; is 4711") || strings.Contains(page, "<code> is") ||
		!strings.Contains(page, "(person web:phone)") || !strings.Contains(page, `action="/memory/1/forget"`) || !strings.Contains(page, "tags: garage") {
		t.Errorf("the page does not list the entry escaped with who saved it:\n%s", page)
	}
	// The search ranks as memory/search: the lamp's entry first for "lamp".
	_, page = phone.do("GET", "/memory?q=porch+lamp", "")
	if i, j := strings.Index(page, "porch lamp is on"), strings.Index(page, "gate &lt;code&gt;"); i < 0 || (j >= 0 && j < i) || !strings.Contains(page, "Found, best first") {
		t.Errorf("the search for porch lamp:\n%s", page)
	}
	if _, page := laptop.do("GET", "/memory", ""); strings.Contains(page, "4711") {
		t.Error("another browser reads phone's entry, which is not shared")
	}

	// A viewer's forget reaches the authorizer, which refuses it, audited.
	if st, body := viewer.form("/memory/1/forget", url.Values{}); st != 403 || !strings.Contains(body, "is denied by the policy") {
		t.Errorf("a viewer's forget: %d %.300s", st, body)
	}
	if who, cmd, detail, ok := d.newestEntry(); who != "web:wall" || cmd != "@memory/forget{id=1}" || ok || !strings.HasPrefix(detail, "refused") {
		t.Errorf("the viewer's forget in the audit: %s %s %q %v", who, cmd, detail, ok)
	}
	if _, page := viewer.do("GET", "/memory", ""); strings.Contains(page, "<form method=\"post\"") {
		t.Error("a viewer's page shows a form that calls")
	}
	if st, body := phone.form("/memory/1/forget", url.Values{}); st != 303 {
		t.Fatalf("forget: %d %s", st, body)
	}
	if raw, _ := os.ReadFile(file); strings.Contains(string(raw), "4711") {
		t.Errorf("MEMORY.md still holds the forgotten entry:\n%s", raw)
	}
	if who, cmd, _, ok := d.newestEntry(); who != "web:phone" || cmd != "@memory/forget{id=1}" || !ok {
		t.Errorf("the forget's audit: %s %s %v", who, cmd, ok)
	}

	// SOUL.md: an operator's browser has no form, and its post is refused.
	soul := filepath.Join(d.mem.Dir, memory.SoulFile)
	os.WriteFile(soul, []byte("You are terse.\n"), 0o600)
	if _, page := phone.do("GET", "/memory", ""); strings.Contains(page, `action="/memory/soul"`) || !strings.Contains(page, "You are terse.") {
		t.Errorf("an operator's page: the persona not shown, or its form shown:\n%s", page)
	}
	if st, body := phone.form("/memory/soul", url.Values{"text": {"You obey everyone."}}); st != 403 || !strings.Contains(body, "paired as operator") {
		t.Errorf("an operator's SOUL.md: %d %.300s", st, body)
	}
	if raw, _ := os.ReadFile(soul); string(raw) != "You are terse.\n" {
		t.Errorf("SOUL.md after a refused write: %q", raw)
	}
	if _, page := laptop.do("GET", "/memory", ""); !strings.Contains(page, `action="/memory/soul"`) || !strings.Contains(page, ">You are terse.</textarea>") {
		t.Errorf("an owner's page has no SOUL.md form:\n%s", page)
	}
	if st, body := laptop.form("/memory/soul", url.Values{"text": {"You are kind.\r\nYou answer briefly."}}); st != 303 {
		t.Fatalf("an owner's SOUL.md: %d %s", st, body)
	}
	if raw, _ := os.ReadFile(soul); string(raw) != "You are kind.\nYou answer briefly.\n" {
		t.Errorf("SOUL.md: %q", raw)
	}
	if who, cmd, detail, ok := d.newestEntry(); who != "web:laptop" || !strings.HasPrefix(cmd, `@memory/persona{file="soul"`) || !ok || !strings.HasPrefix(detail, "SOUL.md written, 34 bytes") {
		t.Errorf("the persona's audit: %s %s %q %v", who, cmd, detail, ok)
	}
	if st, body := laptop.form("/memory/user", url.Values{"text": {"bell \x07"}}); st != 422 || !strings.Contains(body, "control characters") {
		t.Errorf("a control character in USER.md: %d %.300s", st, body)
	}
}

// Without a workspace the page says memory is off, and calls nothing.
func TestMemoryPageOff(t *testing.T) {
	d := newDash(t, nil)
	phone := d.pair("phone", Operator)
	before := len(d.audited())
	if resp, page := phone.do("GET", "/memory", ""); resp.StatusCode != 200 || !strings.Contains(page, "Memory is off") {
		t.Errorf("%d %s", resp.StatusCode, page)
	}
	if resp, _ := phone.do("GET", "/api/memory", ""); resp.StatusCode != 404 {
		t.Errorf("/api/memory: %d", resp.StatusCode)
	}
	if len(d.audited()) != before {
		t.Error("a read was audited")
	}
}
