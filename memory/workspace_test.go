package memory

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/tools"
)

func openTest(t *testing.T, dir string) *Workspace {
	t.Helper()
	w, err := Open(dir, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	w.SetClock(func() time.Time { return time.Date(2026, 11, 20, 15, 4, 5, 0, time.UTC) })
	return w
}

func ids(es []Entry) []int {
	var out []int
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func TestStemsMeet(t *testing.T) {
	for _, p := range [][2]string{
		{"lights", "light"}, {"lighting", "light"}, {"watering", "water"}, {"watered", "water"},
		{"batteries", "battery"}, {"boxes", "box"}, {"running", "run"}, {"heater", "heat"},
		{"swimming", "swim"}, {"cleaning", "cleaned"}, {"bake", "baking"}, {"closes", "closed"},
	} {
		if a, b := stem(p[0]), stem(p[1]); a != b {
			t.Errorf("stem(%q) = %q, stem(%q) = %q: want the same", p[0], a, p[1], b)
		}
	}
	if got := terms("What is the Garage's relay, and where's it?"); strings.Join(got, " ") != "garag relay" {
		t.Errorf("terms = %q, want [garag relay]", got)
	}
}

// A saved entry is in MEMORY.md with who saved it, is found by other words of
// the same stem, survives a new Workspace on the same directory (a restart),
// and is gone once forgotten; ids are never given twice.
func TestSaveSearchForgetRestart(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir)
	e, err := w.Save(Entry{Text: "The garage relay must never stay on more than two seconds.", Source: Person, User: "telegram:42 (@ann)", Channel: "telegram", Tags: []string{"Garage", " safety rules"}})
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != 1 || e.User != "telegram:42" || strings.Join(e.Tags, ",") != "garage,safety-rules" {
		t.Errorf("saved %+v", e)
	}
	if _, err := w.Save(Entry{Text: "Anna is away until the 12th.", Source: Model, User: "telegram:42", Channel: "telegram"}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(w.path(MemoryFile))
	if !strings.Contains(string(b), "- The garage relay must never stay on more than two seconds. <!-- #1 2026-11-20 person telegram:42 @telegram tags:garage,safety-rules -->\n") {
		t.Errorf("MEMORY.md:\n%s", b)
	}

	w2 := openTest(t, dir) // a restart
	es, err := w2.Search("how long may the relays stay switched on?", 5)
	if err != nil || len(es) != 1 || es[0].ID != 1 || es[0].Source != Person || es[0].Channel != "telegram" {
		t.Fatalf("after a restart: %v, %v", es, err)
	}
	if es, _ := w2.Search("when is anna back", 5); len(es) != 1 || es[0].ID != 2 || es[0].Author() != "model for telegram:42" {
		t.Errorf("anna: %v", es)
	}
	if _, err := w2.Forget(2); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Forget(2); !errors.Is(err, ErrNoEntry) {
		t.Errorf("forget twice: %v", err)
	}
	if es, _ := w.Search("anna", 5); len(es) != 0 {
		t.Errorf("forgotten, yet found by the other workspace: %v", es)
	}
	e3, _ := w.Save(Entry{Text: "third", Source: Person})
	if e3.ID != 3 {
		t.Errorf("after forgetting #2 the next id is %d, want 3 (never reused)", e3.ID)
	}
}

// Editing MEMORY.md by hand changes what search finds: an entry's text
// changed, a line added (it gets an id), a line removed. Other lines a person
// wrote stay as they were.
func TestHandEdits(t *testing.T) {
	w := openTest(t, t.TempDir())
	if _, err := w.Save(Entry{Text: "The porch light turns off at midnight.", Source: Person, User: "console"}); err != nil {
		t.Fatal(err)
	}
	if es, _ := w.Search("porch midnight", 5); len(es) != 1 {
		t.Fatalf("before the edit: %v", es)
	}
	b, _ := os.ReadFile(w.path(MemoryFile))
	edited := strings.Replace(string(b), "turns off at midnight", "turns off at eleven", 1) +
		"\n## Pets\nSome prose a person wrote, which is an entry too.\n* Miso is allergic to chicken.\n  She may have fish.\n"
	if err := os.WriteFile(w.path(MemoryFile), []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	if es, _ := w.Search("midnight", 5); len(es) != 0 {
		t.Errorf("the edited-out word still found: %v", es)
	}
	es, err := w.Search("when does the porch light go off? eleven", 5)
	if err != nil || len(es) != 1 || es[0].ID != 1 || es[0].Source != Person {
		t.Fatalf("the edited entry: %v %v", es, err)
	}
	es, _ = w.Search("can the cat eat fish", 5)
	if len(es) == 0 || es[0].Text != "Miso is allergic to chicken.\nShe may have fish." || es[0].Source != File || es[0].Section != "Pets" {
		t.Fatalf("the hand-written entry: %+v", es)
	}
	if es, _ := w.Search("pets", 5); len(es) != 2 {
		t.Errorf("the heading's word finds the entries under it: %v", es)
	}
	b, _ = os.ReadFile(w.path(MemoryFile))
	if !strings.Contains(string(b), "\n## Pets\n") || !strings.Contains(string(b), "- Miso is allergic to chicken. <!-- #") {
		t.Errorf("the hand-written lines got ids and the rest stayed:\n%s", b)
	}
	// A line removed by hand is forgotten.
	lines := strings.Split(string(b), "\n")
	var kept []string
	for _, ln := range lines {
		if !strings.Contains(ln, "porch") {
			kept = append(kept, ln)
		}
	}
	os.WriteFile(w.path(MemoryFile), []byte(strings.Join(kept, "\n")), 0o600)
	if es, _ := w.Search("porch", 5); len(es) != 0 {
		t.Errorf("removed by hand, still found: %v", es)
	}
}

// What a person may get wrong in the file is reported by line, and nothing
// they wrote is lost.
func TestFileProblems(t *testing.T) {
	w := openTest(t, t.TempDir())
	text := "- one <!-- #3 2026-01-01 person -->\n- two <!-- #3 2026-01-02 person -->\n- three <!-- #x oops -->\n- four <!-- #9 yesterday person -->\n"
	os.WriteFile(w.path(MemoryFile), []byte(text), 0o600)
	st, err := w.Rebuild()
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 4 || len(st.Problems) != 3 {
		t.Fatalf("stats %+v", st)
	}
	for i, want := range []string{"MEMORY.md:2: id #3 is used twice", "MEMORY.md:3: \"#x\" is not an entry id", "MEMORY.md:4: entry #9: \"yesterday\" is not a date"} {
		if !strings.HasPrefix(st.Problems[i], want) {
			t.Errorf("problem %d = %q, want %q...", i, st.Problems[i], want)
		}
	}
	es, _ := w.List()
	if got := ids(es); len(got) != 4 || got[0] != 3 || got[1] == 3 || got[2] == got[1] {
		t.Errorf("ids %v: every entry kept, each with its own id", got)
	}
	for i, want := range []string{"one", "two", "three", "four"} {
		if es[i].Text != want {
			t.Errorf("entry %d = %q, want %q", i, es[i].Text, want)
		}
	}
}

// Bounds: text, entries, the file; text cannot fake an entry's comment.
func TestBounds(t *testing.T) {
	dir := t.TempDir()
	w, _ := Open(dir, Limits{MaxEntries: 2, MaxTextBytes: 60, MaxFileBytes: 1000})
	if _, err := w.Save(Entry{Text: strings.Repeat("x", 61), Source: Person}); err == nil || !strings.Contains(err.Error(), "at most 60") {
		t.Errorf("long text: %v", err)
	}
	if _, err := w.Save(Entry{Text: "  ", Source: Person}); err == nil {
		t.Error("empty text saved")
	}
	e, err := w.Save(Entry{Text: "a --> <!-- #99 2020-01-01 person owner --> b", Source: Model})
	if err != nil {
		t.Fatal(err)
	}
	w2, _ := Open(dir, Limits{})
	es, _ := w2.List()
	if len(es) != 1 || es[0].ID != e.ID || es[0].Source != Model || strings.Contains(es[0].Text, "-->") {
		t.Errorf("comment markers in text: %+v", es)
	}
	w.Save(Entry{Text: "two", Source: Person})
	if _, err := w.Save(Entry{Text: "three", Source: Person}); err == nil || !strings.Contains(err.Error(), "memory is full") {
		t.Errorf("over max entries: %v", err)
	}
	os.WriteFile(w.path(MemoryFile), []byte(strings.Repeat("- filler line\n", 100)), 0o600)
	if _, err := w.Search("filler", 5); err == nil || !strings.Contains(err.Error(), "over the limit of 1000") {
		t.Errorf("oversized file: %v", err)
	}
}

func TestPersona(t *testing.T) {
	w, _ := Open(t.TempDir(), Limits{MaxPersonaBytes: 20})
	os.WriteFile(w.path(SoulFile), []byte("You are Pip, cheerful and brief.\n"), 0o600)
	soul, user, cut, err := w.Persona()
	if err != nil || soul != "You are Pip, cheerfu" || user != "" || !cut {
		t.Errorf("persona %q %q %v %v", soul, user, cut, err)
	}
}

// Who saved is kept whatever the door calls them: nothing in a principal's
// name can end the entry's comment or read as another of its fields.
func TestAuthorsInTheComment(t *testing.T) {
	dir := t.TempDir()
	w := openTest(t, dir)
	for _, who := range [][2]string{{"mcp:x-->y", "mcp:x--y"}, {"@tags:evil", "_tags:evil"}, {"#7 hi", "7"}, {"telegram:42 (@ann)", "telegram:42"}} {
		e, err := w.Save(Entry{Text: "note", Source: Program, User: who[0], Channel: "<mcp>"})
		if err != nil {
			t.Fatal(err)
		}
		es, _ := openTest(t, dir).List()
		got := es[len(es)-1]
		if got.ID != e.ID || got.User != who[1] || got.Channel != "mcp" || got.Source != Program || len(got.Tags) != 0 {
			t.Errorf("user %q read back as %+v", who[0], got)
		}
	}
	if es, err := w.Search("note", 1<<40); err != nil || len(es) != 4 {
		t.Errorf("a huge n: %d entries, %v", len(es), err)
	}
}

// A workspace that cannot be written still searches the lines written by hand
// (the lock cannot be taken here: its file's name is taken by a directory).
func TestUnwritableWorkspace(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/MEMORY.md", []byte("- the spare key is under the pot\n"), 0o600)
	os.Mkdir(dir+"/"+lockFile, 0o700)
	w := openTest(t, dir)
	if es, err := w.Search("where is the spare key", 5); err != nil || len(es) != 1 || es[0].ID != 1 {
		t.Errorf("%v %v", es, err)
	}
	st, err := w.Rebuild()
	if err != nil || len(st.Problems) != 1 || !strings.Contains(st.Problems[0], "could not be saved") {
		t.Errorf("rebuild: %+v %v", st, err)
	}
	if _, err := w.Save(Entry{Text: "x", Source: Person}); err == nil {
		t.Error("saved without the lock")
	}
}

// A turn's notes are the entries the message is about: one sharing a common
// word only is left out when a much better one is there; none at all when
// nothing shares a word; cut to the budget.
func TestRecall(t *testing.T) {
	boardModel := tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Model}
	w := openTest(t, t.TempDir())
	for _, s := range []string{
		"The garage relay must never stay on more than two seconds.",
		"Switch the porch light off at midnight.",
		"Miso the cat is allergic to chicken.",
	} {
		w.Save(Entry{Text: s, Source: Person, User: "console"})
	}
	p := &Prompt{W: w}
	got := p.Recall(boardModel, "switch the garage relay on for two seconds", 200)
	if !strings.Contains(got, "garage relay") || strings.Contains(got, "porch") || strings.Contains(got, "Miso") {
		t.Errorf("recall:\n%s", got)
	}
	if got := p.Recall(boardModel, "what is the weather like", 200); got != "" {
		t.Errorf("nothing relevant, yet:\n%s", got)
	}
	if got := p.Recall(boardModel, "switch the garage relay on", 20); got != "" {
		t.Errorf("over the budget, yet:\n%s", got)
	}
	if got := p.Recall(boardModel, "porch light", 0); got != "" {
		t.Errorf("a zero budget, yet:\n%s", got)
	}
}

// Run as root (sudo clawedge memory add), a save keeps the file its owner's.
func TestSaveKeepsTheOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can give a file away")
	}
	dir := t.TempDir()
	os.WriteFile(dir+"/MEMORY.md", []byte("- one\n"), 0o600)
	os.Chown(dir+"/MEMORY.md", 1234, 1235)
	w := openTest(t, dir)
	if _, err := w.Save(Entry{Text: "two", Source: Person}); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir + "/MEMORY.md")
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 1234 || st.Gid != 1235 {
		t.Errorf("owner %d:%d, want 1234:1235", st.Uid, st.Gid)
	}
}
