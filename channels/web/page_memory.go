package web

// The memory page (/memory): the entries of MEMORY.md this browser may read
// (its own and the shared ones, as memory/search finds them; the board's too
// when policy.owners names web:<name>), with who saved each and when; a
// search ranked by the very code memory/search ranks with; a form to save an
// entry (memory/save) and on each entry a button to forget it
// (memory/forget, whose owner the authorizer weighs); SOUL.md and USER.md,
// with a form to rewrite each for an owner's browser (memory/persona, which
// the authorizer runs only for a person at the board or an owner). Every
// change is a call by web:<name> on the one call path.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// MemoryFacts is what the memory page reads of the daemon's workspace.
type MemoryFacts interface {
	// Entries are the entries c may read, in the file's order.
	Entries(c tools.Caller) ([]MemoryEntry, error)
	// Search is memory/search's ranking over what c may read: the n best
	// for query, best first.
	Search(c tools.Caller, query string, n int) ([]MemoryEntry, error)
	// Persona is SOUL.md and USER.md as they are.
	Persona() (soul, user string, err error)
}

// MemoryEntry is one entry as the page shows it.
type MemoryEntry struct {
	ID     int       `json:"id"`
	Date   time.Time `json:"date"`   // the day it was saved
	Author string    `json:"author"` // "person telegram:42", "model for web:phone", "file"
	Shared bool      `json:"shared,omitempty"`
	Tags   []string  `json:"tags,omitempty"`
	Text   string    `json:"text"`
}

// Bounds of the page: search results (memory/search's own most), entries
// listed (newest first), a query.
const (
	memorySearchMax = 20
	memoryListMax   = 200
	memoryQueryMax  = 500
)

func (s *Server) memoryRoutes() []route {
	return []route{
		{"GET /memory", read, s.guard(s.memoryPage, true)},
		{"POST /memory", call, s.guard(s.memorySaveForm, true)},
		{"POST /memory/{id}/forget", call, s.guard(s.memoryForgetForm, true)},
		{"POST /memory/soul", call, s.guard(s.personaForm("soul"), true)},
		{"POST /memory/user", call, s.guard(s.personaForm("user"), true)},
		{"GET /api/memory", read, s.guard(s.apiMemory, true)},
	}
}

// memoryList is what the page lists for se: the search's results for
// query, or (query empty) the newest entries.
func (s *Server) memoryList(se session, query string) ([]MemoryEntry, error) {
	if s.Memory == nil {
		return []MemoryEntry{}, nil
	}
	c := Caller(se.Name, se.Role)
	if len(query) > memoryQueryMax {
		return nil, fmt.Errorf("the query is longer than %d bytes", memoryQueryMax)
	}
	if strings.TrimSpace(query) != "" {
		return s.Memory.Search(c, query, memorySearchMax)
	}
	all, err := s.Memory.Entries(c)
	if err != nil {
		return nil, err
	}
	out := make([]MemoryEntry, 0, min(len(all), memoryListMax))
	for i := len(all) - 1; i >= 0 && len(out) < memoryListMax; i-- {
		out = append(out, all[i])
	}
	return out, nil
}

// apiMemory is the page's list as JSON: ?q= searches.
func (s *Server) apiMemory(w http.ResponseWriter, r *http.Request) {
	if s.Memory == nil {
		apiError(w, http.StatusNotFound, "no memory on this board (memory.enabled is off)")
		return
	}
	es, err := s.memoryList(sessionOf(r), r.URL.Query().Get("q"))
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, es)
}

// memoryCall makes one memory/* call for the form's browser: back to the
// page on success (303), else the page again with why.
func (s *Server) memoryCall(w http.ResponseWriter, r *http.Request, tool string, args map[string]any) {
	res := s.formCall(w, r, tool, args)
	if status := callStatus(res); status != http.StatusOK {
		writeHTML(w, status, s.memoryHTML(sessionOf(r), "", res.Text))
		return
	}
	http.Redirect(w, r, "/memory", http.StatusSeeOther)
}

func (s *Server) memorySaveForm(w http.ResponseWriter, r *http.Request) {
	args := map[string]any{"text": r.PostFormValue("text")}
	if tags := strings.TrimSpace(r.PostFormValue("tags")); tags != "" {
		args["tags"] = tags
	}
	s.memoryCall(w, r, "memory/save", args)
}

// memoryForgetForm is memory/forget of the entry the path names; an id
// that is not a number goes to the call as it is, whose validation says so.
func (s *Server) memoryForgetForm(w http.ResponseWriter, r *http.Request) {
	var id any = r.PathValue("id")
	if n, err := strconv.Atoi(r.PathValue("id")); err == nil {
		id = n
	}
	s.memoryCall(w, r, "memory/forget", map[string]any{"id": id})
}

func (s *Server) personaForm(file string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.memoryCall(w, r, "memory/persona", map[string]any{"file": file, "text": r.PostFormValue("text")})
	}
}

func (s *Server) memoryPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query().Get("q")
	writeHTML(w, http.StatusOK, s.memoryHTML(sessionOf(r), q, ""))
}

// memoryHTML is the memory page for se with query's results, showing note
// (an error) when set.
func (s *Server) memoryHTML(se session, query, note string) string {
	var body htmlPage
	body.WriteString("<h1>Memory</h1>\n")
	if s.Memory == nil {
		body.WriteString("<p>Memory is off on this board (memory.enabled in the config).</p>\n")
	} else if e := s.memoryBody(&body, se, query); e != "" && note == "" {
		note = e
	}
	var p htmlPage
	p.head("memory", se, note)
	p.WriteString(body.String())
	p.foot()
	return p.String()
}

// memoryBody writes the page's body and returns the error to show, if any.
func (s *Server) memoryBody(p *htmlPage, se session, query string) string {
	call := se.Role != Viewer
	p.f(`<form id="memory-search" method="get" action="/memory" class="filter" role="search"><label>Search memory <input type="search" name="q" value="%s" maxlength="%d" autocomplete="off"></label> <button>Search</button></form>
`, query, memoryQueryMax)
	if call {
		p.f(`<form id="memory-save" method="post" action="/memory" class="stack" aria-labelledby="memory-save-h"><h2 id="memory-save-h">Remember</h2>
<input type="hidden" name="csrf" value="%s">
<label>Fact <input name="text" maxlength="1000" required autocomplete="off" placeholder="the gate code changes on Mondays"></label>
<label>Tags (optional) <input name="tags" maxlength="200" autocomplete="off" placeholder="garage, codes"></label>
<button>Remember</button></form>
`, se.CSRF)
	}
	es, err := s.memoryList(se, query)
	heading := "Entries, newest first"
	if strings.TrimSpace(query) != "" {
		heading = "Found, best first"
	}
	p.f(`<section aria-labelledby="entries-h"><h2 id="entries-h">%s</h2>
<ul id="entries" class="cards">`, heading)
	for _, e := range es {
		shared := ""
		if e.Shared {
			shared = ", shared"
		}
		p.f(`<li data-entry="%d"><p><strong>#%d</strong> <span class="when">%s</span> <span class="who">(%s%s)</span></p><p class="text">%s</p>`,
			e.ID, e.ID, e.Date.UTC().Format(time.DateOnly), e.Author, shared, e.Text)
		if len(e.Tags) > 0 {
			p.f(`<p class="tags">tags: %s</p>`, strings.Join(e.Tags, ", "))
		}
		if call {
			p.f(`<form method="post" action="/memory/%d/forget"><input type="hidden" name="csrf" value="%s"><button aria-label="Forget entry %d">Forget</button></form>`, e.ID, se.CSRF, e.ID)
		}
		p.WriteString("</li>\n")
	}
	if len(es) == 0 && err == nil {
		p.WriteString(`<li>Nothing remembered that this browser may read.</li>`)
	}
	p.WriteString("</ul></section>\n")
	soul, user, perr := s.Memory.Persona()
	for _, f := range []struct{ key, file, what, text string }{
		{"soul", "SOUL.md", "The assistant's persona", soul},
		{"user", "USER.md", "What it knows of its people", user},
	} {
		p.f(`<section aria-labelledby="%s-h"><h2 id="%s-h">%s</h2><p class="hint">%s, at the start of every conversation.</p>`, f.key, f.key, f.file, f.what)
		if se.Role == Owner {
			p.f(`<form method="post" action="/memory/%s" class="persona" id="persona-%s"><input type="hidden" name="csrf" value="%s">
<label for="%s-text">%s, whole</label><textarea id="%s-text" name="text" rows="8" maxlength="8192" data-bytes="%d">%s</textarea>
<button>Save %s</button></form>`, f.key, f.key, se.CSRF, f.key, f.file, f.key, len(f.text), f.text, f.file)
		} else if f.text == "" {
			p.WriteString(`<p>(empty)</p>`)
		} else {
			p.f(`<pre class="persona">%s</pre>`, f.text)
		}
		p.WriteString("</section>\n")
	}
	switch {
	case err != nil:
		return err.Error()
	case perr != nil:
		return perr.Error()
	}
	return ""
}
