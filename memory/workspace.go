package memory

// This file: the workspace directory and its memory: MEMORY.md read again
// (and the index rebuilt) whenever it changed on disk, written atomically
// under a lock that the daemon and `clawedge memory` share.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/internal/atomicfile"
	"github.com/clawedge/clawedge/tools"
)

// File names in the workspace.
const (
	SoulFile   = "SOUL.md"
	UserFile   = "USER.md"
	MemoryFile = "MEMORY.md"
	lockFile   = ".memory.lock"
)

// Limits bound the workspace.
type Limits struct {
	// MaxEntries bounds the entries a save may bring MEMORY.md to.
	MaxEntries int
	// MaxFileBytes bounds MEMORY.md: a larger file is not read (the error
	// says so) and a save that would pass it is refused.
	MaxFileBytes int
	// MaxTextBytes bounds one entry's text when saved.
	MaxTextBytes int
	// MaxPersonaBytes bounds SOUL.md and USER.md each: the rest is not read.
	MaxPersonaBytes int
}

// Default limits: 10,000 entries of a line each fit in 2 MiB.
const (
	DefaultMaxEntries      = 10000
	DefaultMaxFileBytes    = 4 << 20
	DefaultMaxTextBytes    = 1000
	DefaultMaxPersonaBytes = 8 << 10
	// MaxTags and MaxTagLen bound an entry's tags.
	MaxTags   = 8
	MaxTagLen = 32
)

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if l.MaxTextBytes <= 0 {
		l.MaxTextBytes = DefaultMaxTextBytes
	}
	if l.MaxPersonaBytes <= 0 {
		l.MaxPersonaBytes = DefaultMaxPersonaBytes
	}
	return l
}

// Workspace is data_dir/workspace. It is safe for concurrent use, and for use
// beside another process (the CLI) working on the same directory.
type Workspace struct {
	Dir string
	lim Limits
	now func() time.Time

	mu      sync.Mutex
	owners  []string // principal ids that are owners (policy.owners)
	stamp   stamp    // MEMORY.md as last read
	doc     *doc
	entries []*Entry
	idx     *index
	loadErr error
}

// stamp identifies a version of a file: a change by anyone changes it.
type stamp struct {
	mod  time.Time
	size int64
	ino  uint64
	ok   bool
}

func statStamp(path string) (stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}, err
	}
	return stamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi), ok: true}, nil
}

// Open opens the workspace directory. Nothing is read yet, and the directory
// is made only by the first save: the memory is loaded on first use, so a
// daemon whose memory is never used pays nothing for it.
func Open(dir string, lim Limits) (*Workspace, error) {
	if dir == "" {
		return nil, errors.New("memory: no workspace directory")
	}
	return &Workspace{Dir: dir, lim: lim.withDefaults(), now: time.Now}, nil
}

// SetClock sets the clock entries are dated by (tests).
func (w *Workspace) SetClock(now func() time.Time) { w.now = now }

func (w *Workspace) path(name string) string { return filepath.Join(w.Dir, name) }

// current brings the index up to date with MEMORY.md, reading it again when it
// changed. Called with w.mu held.
func (w *Workspace) current() error {
	st, err := statStamp(w.path(MemoryFile))
	if errors.Is(err, fs.ErrNotExist) {
		st, err = stamp{}, nil
	}
	if err != nil {
		return fmt.Errorf("memory: %w", err)
	}
	if w.doc != nil && st == w.stamp {
		return w.loadErr
	}
	return w.load()
}

// load reads MEMORY.md and rebuilds the index; entries written by hand get
// their ids, and the file is written back with them (under the lock, and only
// if nobody changed it meanwhile). Called with w.mu held.
func (w *Workspace) load() error {
	d, st, err := w.read()
	if err != nil {
		w.loadErr, w.doc, w.stamp = err, nil, stamp{}
		return err
	}
	if d.fresh {
		err := w.locked(func() error {
			now, err := statStamp(w.path(MemoryFile))
			if err != nil || now != st {
				return nil // changed meanwhile: the next use reads it again
			}
			written, err := w.write(d)
			if err == nil {
				st = written
			}
			return err
		})
		if err != nil {
			// A read-only workspace still searches: the ids given here hold
			// while the file does not change.
			d.problems = append(d.problems, fmt.Sprintf("the ids of the lines written by hand could not be saved: %v", err))
		}
	}
	w.doc, w.stamp, w.loadErr = d, st, nil
	w.entries = d.entries()
	w.idx = buildIndex(w.entries)
	return nil
}

// read parses MEMORY.md; a missing file is an empty memory.
func (w *Workspace) read() (*doc, stamp, error) {
	path := w.path(MemoryFile)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return parse(Header, w.now()), stamp{}, nil
	}
	if err != nil {
		return nil, stamp{}, fmt.Errorf("memory: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, stamp{}, fmt.Errorf("memory: %w", err)
	}
	if fi.Size() > int64(w.lim.MaxFileBytes) {
		return nil, stamp{}, fmt.Errorf("memory: %s is %d bytes, over the limit of %d (memory.max_bytes): shorten it by hand", path, fi.Size(), w.lim.MaxFileBytes)
	}
	b := make([]byte, fi.Size())
	if _, err := readFull(f, b); err != nil {
		return nil, stamp{}, fmt.Errorf("memory: %s: %w", path, err)
	}
	return parse(string(b), w.now()), stamp{mod: fi.ModTime(), size: fi.Size(), ino: inode(fi), ok: true}, nil
}

// write replaces MEMORY.md with d atomically (a temporary file, synced,
// renamed over it) and returns the new file's stamp. Called under the lock.
func (w *Workspace) write(d *doc) (stamp, error) {
	text := d.render()
	if len(text) > w.lim.MaxFileBytes {
		return stamp{}, fmt.Errorf("memory: MEMORY.md would be %d bytes, over the limit of %d (memory.max_bytes): forget some entries first", len(text), w.lim.MaxFileBytes)
	}
	path := w.path(MemoryFile)
	if err := atomicfile.WriteFile(path, []byte(text), 0o600); err != nil {
		return stamp{}, fmt.Errorf("memory: %w", err)
	}
	return statStamp(path)
}

// change applies edit to the memory as it is on disk now, under the lock, and
// writes it: the daemon and the CLI never lose each other's entries.
func (w *Workspace) change(edit func(d *doc) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := os.MkdirAll(w.Dir, 0o700); err != nil {
		return fmt.Errorf("memory: workspace: %w", err)
	}
	return w.locked(func() error {
		d, _, err := w.read()
		if err != nil {
			return err
		}
		if err := edit(d); err != nil {
			return err
		}
		st, err := w.write(d)
		if err != nil {
			return err
		}
		w.doc, w.stamp, w.loadErr = d, st, nil
		w.entries = d.entries()
		w.idx = buildIndex(w.entries)
		return nil
	})
}

// Save adds an entry (its ID and Date are given here) and returns it.
func (w *Workspace) Save(e Entry) (Entry, error) {
	text, err := cleanText(e.Text, w.lim.MaxTextBytes)
	if err != nil {
		return Entry{}, err
	}
	e.Text = text
	e.Tags = splitTags(strings.Join(e.Tags, ","))
	e.User = metaWord(e.User)
	e.Channel = metaWord(e.Channel)
	e.Shared = metaWord(e.Shared)
	if !knownSource(string(e.Source)) {
		return Entry{}, fmt.Errorf("memory: unknown source %q", e.Source)
	}
	e.Date = w.now().UTC().Truncate(24 * time.Hour)
	var saved Entry
	err = w.change(func(d *doc) error {
		if n := len(d.entries()); n >= w.lim.MaxEntries {
			return fmt.Errorf("memory is full (%d entries, memory.max_entries): forget some first", n)
		}
		saved = d.add(e)
		return nil
	})
	return saved, err
}

// metaWord is a principal or channel as an entry's comment can hold it: its
// stable part ("telegram:42 (@ann)" is "telegram:42"), without what would end
// the comment or read as another field of it.
func metaWord(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), " ")
	s = strings.Map(func(r rune) rune {
		if r == '<' || r == '>' || isControl(r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimLeft(s, "@#")
	if strings.HasPrefix(s, "tags:") || s == "shared" || strings.HasPrefix(s, "shared:") {
		s = "_" + s
	}
	return s
}

// ErrNoEntry is forgetting an id that is not in the memory.
var ErrNoEntry = errors.New("no such entry")

// Forget removes entry id and returns it, whoever's it is: the person at the
// board's shell (clawedge memory rm), who may edit the file anyway. The tools
// forget with memory/forget, which the authorizer decides.
func (w *Workspace) Forget(id int) (Entry, error) {
	return w.forget(id)
}

func (w *Workspace) forget(id int) (Entry, error) {
	var gone Entry
	err := w.change(func(d *doc) error {
		e, ok := d.remove(id)
		if !ok {
			return fmt.Errorf("memory: #%d: %w (memory/search lists the ids)", id, ErrNoEntry)
		}
		gone = e
		return nil
	})
	return gone, err
}

// entry is entry id as the file holds it now.
func (w *Workspace) entry(id int) (Entry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.current() != nil {
		return Entry{}, false
	}
	for _, e := range w.entries {
		if e.ID == id {
			return *e, true
		}
	}
	return Entry{}, false
}

// Share marks entry id shared, by the principal by, so that everyone who may
// search memory finds it; with by "", it is no longer shared (only its owner
// finds it). The person at the board's shell does it (clawedge memory share,
// unshare), as they may edit the file.
func (w *Workspace) Share(id int, by string) (Entry, error) {
	by = metaWord(by)
	var out Entry
	err := w.change(func(d *doc) error {
		b := d.find(id)
		if b == nil {
			return fmt.Errorf("memory: #%d: %w (memory list shows the ids)", id, ErrNoEntry)
		}
		if b.entry.Shared != by {
			b.entry.Shared = by
			b.raw = nil // written anew, with the mark (or without it)
		}
		out = *b.entry
		return nil
	})
	return out, err
}

// Search returns the n entries most relevant to query, best first; an empty
// query returns the n newest. It searches every entry: the person at the
// board's shell (clawedge memory search). The tools search with SearchAs.
func (w *Workspace) Search(query string, n int) ([]Entry, error) {
	es, _, err := w.search(query, n, nil)
	return es, err
}

// SearchAs is Search over the entries caller c may read: its own, and the
// shared ones (reader.reads).
func (w *Workspace) SearchAs(c tools.Caller, query string, n int) ([]Entry, error) {
	r := w.readerOf(c)
	es, _, err := w.search(query, n, r.reads)
	return es, err
}

// search is Search over the entries keep takes (nil: all), with each entry's
// BM25 score (0 for the newest listed).
func (w *Workspace) search(query string, n int, keep func(*Entry) bool) ([]Entry, []float64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.current(); err != nil {
		return nil, nil, err
	}
	n = min(max(n, 1), len(w.entries)) // bounded by what there is, whoever asks
	var out []Entry
	var scores []float64
	if strings.TrimSpace(query) == "" {
		for i := len(w.entries) - 1; i >= 0 && len(out) < n; i-- {
			if keep == nil || keep(w.entries[i]) {
				out = append(out, *w.entries[i])
				scores = append(scores, 0)
			}
		}
		return out, scores, nil
	}
	var docKeep func(int) bool
	if keep != nil {
		docKeep = func(doc int) bool { return keep(w.entries[doc]) }
	}
	for _, h := range w.idx.search(query, n, docKeep) {
		out = append(out, *w.entries[h.doc])
		scores = append(scores, h.score)
	}
	return out, scores, nil
}

// List returns every entry in file order.
func (w *Workspace) List() ([]Entry, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.current(); err != nil {
		return nil, err
	}
	out := make([]Entry, len(w.entries))
	for i, e := range w.entries {
		out[i] = *e
	}
	return out, nil
}

// ListAs is List of the entries caller c may read (its own and the shared
// ones: reader.reads), the rule memory/search keeps: the dashboard lists
// what its browser would find.
func (w *Workspace) ListAs(c tools.Caller) ([]Entry, error) {
	r := w.readerOf(c)
	all, err := w.List()
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for i := range all {
		if r.reads(&all[i]) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// Stats is what a rebuild found.
type Stats struct {
	Entries  int
	Terms    int
	Bytes    int64
	Problems []string // lines of MEMORY.md that could not be read as written
}

// Rebuild reads MEMORY.md again whatever its stamp says, rebuilds the index
// and reports what it holds.
func (w *Workspace) Rebuild() (Stats, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.doc = nil
	if err := w.load(); err != nil {
		return Stats{}, err
	}
	return Stats{Entries: len(w.entries), Terms: len(w.idx.postings), Bytes: w.stamp.size, Problems: w.doc.problems}, nil
}

// readFull reads into b until it is full or the file ends; the count is what
// was read.
func readFull(r io.Reader, b []byte) (int, error) {
	n, err := io.ReadFull(r, b)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return n, err
}
