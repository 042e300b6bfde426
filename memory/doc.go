package memory

// This file: MEMORY.md read and written. One entry per line ("- text"; lines
// indented under it continue it), headings group entries, anything else a
// person wrote is kept as it was. An entry's first line ends with a comment
// holding its id, date, source and author principal, whether an owner shared
// it, and its tags, which a Markdown viewer hides:
//
//	- The garage relay must never stay on more than two seconds. <!-- #12 2026-11-20 person telegram:42 @telegram shared:uid:1000 tags:garage -->
//
// Control characters are never kept in an entry: a save writes them as
// escapes ("\x1b"), and a line written by hand with them is read escaped.
// A line without that comment is an entry written by hand: it gets an id (and
// the comment) the next time the file is loaded. Reading never fails on what a
// person wrote: a line it cannot read as an entry's comment is read as text,
// and the problem is reported with its line number.

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Header starts a new MEMORY.md: it tells a person editing it the format.
const Header = `# Memory

<!-- Long-term memory of this board, one entry per line ("- text"; indented lines continue it).
Edit freely: search follows the file. The comment at the end of an entry's line is its id, date,
source and author (whose entry it is: only they, and the owners, find it), "shared" when everyone
may find it, and its tags: keep it to keep them. Delete a line to forget it. -->
`

// block is one piece of the file: an entry, or lines kept as they are.
type block struct {
	raw   []string // the lines as read; nil once the entry must be written anew
	entry *Entry
}

// doc is a parsed MEMORY.md.
type doc struct {
	blocks   []block
	next     int      // the next id to give (never one given before: the file says so)
	problems []string // what could not be read, by line
	fresh    bool     // some entries had no id: the file should be written back
}

var (
	metaRe = regexp.MustCompile(`^<!--\s*(#.*?)\s*-->\s*$`)
	nextRe = regexp.MustCompile(`^<!--\s*clawedge-memory\s+next-id=(\d+)\s*-->\s*$`)
)

// parse reads MEMORY.md's text. now dates the entries written by hand.
func parse(text string, now time.Time) *doc {
	d := &doc{next: 1}
	text = strings.TrimPrefix(text, "\ufeff")
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	seen := map[int]bool{}
	section := ""
	inComment := false
	cur := -1 // the entry being read, which indented lines continue
	for i, ln := range lines {
		trim := strings.TrimSpace(ln)
		switch {
		case inComment:
			inComment = !strings.Contains(ln, "-->")
			d.raw(ln)
			cur = -1
			continue
		case strings.HasPrefix(trim, "<!-- clawedge-memory") && nextRe.MatchString(trim):
			n, _ := strconv.Atoi(nextRe.FindStringSubmatch(trim)[1])
			d.next = max(d.next, n)
			cur = -1 // written anew at the end
			continue
		case strings.HasPrefix(trim, "<!--"):
			inComment = !strings.Contains(trim, "-->")
			d.raw(ln)
			cur = -1
			continue
		case trim == "":
			d.raw(ln)
			cur = -1
			continue
		case strings.HasPrefix(ln, "#"):
			section = escapeControls(strings.TrimSpace(strings.TrimLeft(trim, "#")))
			d.raw(ln)
			cur = -1
			continue
		case cur >= 0 && (strings.HasPrefix(ln, "  ") || strings.HasPrefix(ln, "\t")):
			b := &d.blocks[cur]
			b.raw = append(b.raw, ln)
			b.entry.Text += "\n" + escapeControls(trim)
			continue
		}
		e := &Entry{Section: section, Source: File}
		body := trim
		if len(body) > 1 && strings.IndexByte("-*+", body[0]) >= 0 && (body[1] == ' ' || body[1] == '\t') {
			body = strings.TrimLeft(body[1:], " \t")
		}
		// The entry's comment is the last one on its line, so that text
		// holding "<!--" cannot hide it.
		if at := strings.LastIndex(body, "<!--"); at >= 0 {
			if m := metaRe.FindStringSubmatch(body[at:]); m != nil {
				if err := readMeta(m[1], e); err != nil {
					d.problems = append(d.problems, fmt.Sprintf("MEMORY.md:%d: %v (the line is kept; it gets a new id)", i+1, err))
					*e = Entry{Section: section, Source: File}
				}
				body = body[:at]
			}
		}
		e.Text = escapeControls(strings.TrimSpace(body))
		if e.Text == "" || strings.HasPrefix(e.Text, "<!--") {
			d.raw(ln) // a bullet with nothing to remember
			cur = -1
			continue
		}
		if e.ID != 0 && seen[e.ID] {
			d.problems = append(d.problems, fmt.Sprintf("MEMORY.md:%d: id #%d is used twice (this line gets a new id)", i+1, e.ID))
			e.ID = 0
		}
		if e.ID == 0 {
			e.Date = now.UTC().Truncate(24 * time.Hour)
			d.fresh = true
		}
		seen[e.ID] = true
		d.next = max(d.next, e.ID+1)
		d.blocks = append(d.blocks, block{raw: []string{ln}, entry: e})
		cur = len(d.blocks) - 1
	}
	// Ids for the entries written by hand, after every id in the file.
	for i := range d.blocks {
		if e := d.blocks[i].entry; e != nil && e.ID == 0 {
			e.ID = d.next
			d.next++
			d.blocks[i].raw = nil
		}
	}
	return d
}

func (d *doc) raw(ln string) { d.blocks = append(d.blocks, block{raw: []string{ln}}) }

// readMeta reads an entry's comment: "#12 2026-11-20 person telegram:42
// @telegram shared:uid:1000 tags:a,b". The words after the source are the
// author principal, "@" its channel, "shared" or "shared:WHO" (who shared
// it), "tags:" its tags, in any order.
func readMeta(s string, e *Entry) error {
	f := strings.Fields(s)
	id, err := strconv.Atoi(strings.TrimPrefix(f[0], "#"))
	if err != nil || id <= 0 {
		return fmt.Errorf("%q is not an entry id (such as #12)", f[0])
	}
	e.ID = id
	if len(f) < 3 {
		return fmt.Errorf("the comment of entry #%d has no date and source (such as <!-- #%d 2026-11-20 person -->)", id, id)
	}
	if e.Date, err = time.Parse(time.DateOnly, f[1]); err != nil {
		return fmt.Errorf("entry #%d: %q is not a date (YYYY-MM-DD)", id, f[1])
	}
	if !knownSource(f[2]) {
		return fmt.Errorf("entry #%d: %q is not a source (person, model, program, summary or file)", id, f[2])
	}
	e.Source = Source(f[2])
	for _, w := range f[3:] {
		switch w = dropControls(w); {
		case w == "":
		case strings.HasPrefix(w, "tags:"):
			e.Tags = splitTags(strings.TrimPrefix(w, "tags:"))
		case w == "shared" || strings.HasPrefix(w, "shared:"):
			e.Shared = cmp.Or(strings.TrimPrefix(strings.TrimPrefix(w, "shared"), ":"), sharedByHand)
		case strings.HasPrefix(w, "@"):
			e.Channel = w[1:]
		default:
			e.User = w
		}
	}
	return nil
}

// splitTags reads "a,b, c" as tags: lower case, without spaces, bounded.
func splitTags(s string) []string {
	var tags []string
	for _, t := range strings.Split(s, ",") {
		t = strings.ToLower(strings.Join(strings.Fields(t), "-"))
		t = strings.Map(func(r rune) rune {
			if r == '<' || r == '>' || r == ',' || isControl(r) {
				return -1
			}
			return r
		}, t)
		if t != "" && len(t) <= MaxTagLen && len(tags) < MaxTags {
			tags = append(tags, t)
		}
	}
	return tags
}

// render is the file's text: kept lines as they were, new or changed entries in
// the canonical form, and the next id last, so that a forgotten id is never
// given again.
func (d *doc) render() string {
	var b strings.Builder
	for _, bl := range d.blocks {
		if bl.raw != nil {
			for _, ln := range bl.raw {
				b.WriteString(ln + "\n")
			}
			continue
		}
		b.WriteString(entryLines(*bl.entry))
	}
	fmt.Fprintf(&b, "<!-- clawedge-memory next-id=%d -->\n", d.next)
	return b.String()
}

// entryLines is an entry as the file holds it.
func entryLines(e Entry) string {
	lines := strings.Split(e.Text, "\n")
	meta := fmt.Sprintf("#%d %s %s", e.ID, e.Date.Format(time.DateOnly), e.Source)
	if e.User != "" {
		meta += " " + e.User
	}
	if e.Channel != "" {
		meta += " @" + e.Channel
	}
	if e.Shared != "" {
		meta += " shared:" + e.Shared
	}
	if len(e.Tags) > 0 {
		meta += " tags:" + strings.Join(e.Tags, ",")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- %s <!-- %s -->\n", lines[0], meta)
	for _, ln := range lines[1:] {
		b.WriteString("  " + ln + "\n")
	}
	return b.String()
}

// entries are the entries in file order.
func (d *doc) entries() []*Entry {
	var out []*Entry
	for _, bl := range d.blocks {
		if bl.entry != nil {
			out = append(out, bl.entry)
		}
	}
	return out
}

// add appends an entry, with the next id.
func (d *doc) add(e Entry) Entry {
	e.ID = d.next
	d.next++
	d.blocks = append(d.blocks, block{entry: &e})
	return e
}

// find is entry id's block; nil when there is none.
func (d *doc) find(id int) *block {
	for i, bl := range d.blocks {
		if bl.entry != nil && bl.entry.ID == id {
			return &d.blocks[i]
		}
	}
	return nil
}

// remove drops the entry id; false when there is none.
func (d *doc) remove(id int) (Entry, bool) {
	for i, bl := range d.blocks {
		if bl.entry != nil && bl.entry.ID == id {
			d.blocks = append(d.blocks[:i], d.blocks[i+1:]...)
			return *bl.entry, true
		}
	}
	return Entry{}, false
}

// cleanText makes text fit on an entry's line: one line, no comment markers
// (which would end or fake the entry's own comment), bounded (as given, before
// its control characters are escaped).
func cleanText(text string, maxLen int) (string, error) {
	text = oneLine(text)
	for strings.Contains(text, "<!--") || strings.Contains(text, "-->") {
		text = strings.NewReplacer("<!--", "<!-", "-->", "->").Replace(text)
	}
	if text == "" {
		return "", fmt.Errorf("the text to remember is empty")
	}
	if len(text) > maxLen {
		return "", fmt.Errorf("the text is %d bytes; an entry holds at most %d (save the gist)", len(text), maxLen)
	}
	return escapeControls(text), nil
}

// sharedByHand is who shared an entry marked "shared" alone: whoever edited
// the file.
const sharedByHand = "file"

// dropControls is a word of an entry's comment without control characters
// (nor bytes that are not UTF-8).
func dropControls(s string) string {
	if !hasControl(s, -1) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}
