package memory

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// FuzzParse: whatever a person (or a broken editor) leaves in MEMORY.md,
// reading it never panics, loses no line's text (read with its control
// characters escaped, and nothing left to escape), and the file as written
// back reads as the same entries (ids, texts, authors, shared marks, tags,
// sections).
func FuzzParse(f *testing.F) {
	f.Add(Header + "- The garage relay must never stay on more than two seconds. <!-- #12 2026-11-20 person telegram:42 @telegram tags:garage -->\n")
	f.Add("## Pets\n* Miso is allergic to chicken.\n  She may have fish.\nplain prose line\n<!-- clawedge-memory next-id=40 -->\n")
	f.Add("- one <!-- #3 2026-01-01 person -->\n- two <!-- #3 2026-01-02 person -->\n- three <!-- #x -->\n\r\n\ufeff- <!-- -->\n")
	f.Add("<!-- open comment\n- inside\n-->\n- after <!-- #1 2026-02-30 model u @c tags:a,,b -->\n\t- tabbed\n")
	f.Add("- code \x1b[2J\a\u009b\xff bell <!-- #4 2026-03-01 program mcp:x @mcp shared tags:a\x07b -->\n  more\x1b]0;title\a\n")
	f.Add("- one <!-- #5 2026-03-01 person web:phone @web shared:uid:1000 -->\n- two <!-- #6 2026-03-01 file shared: -->\n- three <!-- #7 2026-03-01 person shared:x shared -->\n")
	now := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, text string) {
		d := parse(text, now)
		seen := map[int]bool{}
		for _, e := range d.entries() {
			if e.ID <= 0 || seen[e.ID] || e.ID >= d.next {
				t.Fatalf("entry id %d (next %d, seen %v)", e.ID, d.next, seen[e.ID])
			}
			seen[e.ID] = true
			if hasControl(e.Text, '\n') || hasControl(e.User+e.Channel+e.Shared+e.Section+strings.Join(e.Tags, ""), -1) {
				t.Fatalf("a control character read into %+v", *e)
			}
			if !strings.Contains(escapeControls(text), strings.SplitN(e.Text, "\n", 2)[0]) {
				t.Fatalf("entry text %q is not from the file", e.Text)
			}
		}
		out := d.render()
		d2 := parse(out, now)
		a, b := d.entries(), d2.entries()
		if len(a) != len(b) {
			t.Fatalf("%d entries, %d after writing:\n%s", len(a), len(b), out)
		}
		for i := range a {
			if !reflect.DeepEqual(*a[i], *b[i]) {
				t.Fatalf("entry %d changed by writing:\n%+v\n%+v\nfile:\n%s", i, *a[i], *b[i], out)
			}
		}
		if d2.fresh {
			t.Fatalf("the written file has entries without ids:\n%s", out)
		}
	})
}

// FuzzWritePersona: whatever text a browser or a console sends for SOUL.md,
// the write never panics, and either refuses it with why (the file left as
// it was) or writes it whole: UTF-8 with no control character but newlines
// and tabs, CRLF as LF, within the bound, read back by Persona as written.
func FuzzWritePersona(f *testing.F) {
	f.Add("You are terse.\r\nYou answer in one line.")
	f.Add("esc \x1b[2J bell \a csi \u009b bad \xff")
	f.Add("\ttabbed\n\n  spaced  \n")
	f.Add("")
	dir := f.TempDir()
	w, err := Open(dir, Limits{MaxPersonaBytes: 256})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string) {
		before, _, _, _ := w.Persona()
		n, err := w.WritePersona("soul", text)
		soul, _, _, rerr := w.Persona()
		if rerr != nil {
			t.Fatal(rerr)
		}
		if err != nil {
			if soul != before {
				t.Fatalf("a refused write (%v) changed SOUL.md: %q -> %q", err, before, soul)
			}
			return
		}
		if n > 256 || hasControl(strings.ReplaceAll(soul, "\t", " "), '\n') || strings.Contains(soul, "\r") {
			t.Fatalf("written %d bytes, read back %q", n, soul)
		}
		if want := strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n")); soul != want {
			t.Fatalf("read back %q, want %q", soul, want)
		}
	})
}
