package web

import (
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// The pages: readable without JavaScript; assets/app.js adds the live pins
// and the buttons. They are written here with every outside value escaped
// by esc, not with html/template: that package makes the linker keep every
// exported method of the binary (reflection by name), 3 MB of the arm64
// build, for five small pages.

// esc escapes outside text for an HTML element or a quoted attribute.
func esc(s string) string { return html.EscapeString(s) }

func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// htmlPage is a page being written: literal markup from this file, values through esc.
type htmlPage struct{ strings.Builder }

// f writes format with args escaped: every %s of a page is outside text.
func (p *htmlPage) f(format string, args ...any) {
	for i, a := range args {
		if s, ok := a.(string); ok {
			args[i] = esc(s)
		}
	}
	fmt.Fprintf(p, format, args...)
}

var nav = []struct{ page, path, label string }{
	{"overview", "/", "Overview"}, {"pins", "/pins", "Pins"}, {"approvals", "/approvals", "Approvals"},
	{"automations", "/automations", "Automations"}, {"audit", "/audit", "Audit"}, {"models", "/models", "Models"},
	{"chat", "/chat", "Chat"},
	{"sensors", "/sensors", "Sensors"}, {"goals", "/goals", "Goals"}, {"memory", "/memory", "Memory"},
	{"skills", "/skills", "Skills"}, {"setup", "/setup", "Setup"},
}

// libraries are the vendored assets a page's own script uses, loaded before it.
var libraries = map[string][]string{
	"sensors": {"uplot.min.css", "uplot.min.js"}, // page_sensors.go
}

// pageAssets are what page loads besides style.css and app.js: its
// libraries, then its own assets/PAGE.css and assets/PAGE.js when embedded
// (as static/PAGE.css.gz and static/PAGE.js.gz: static.go).
func pageAssets(page string) []string {
	out := slices.Clone(libraries[page])
	for _, own := range []string{page + ".css", page + ".js"} {
		if _, err := fs.Stat(staticFS, "static/"+own+".gz"); err == nil {
			out = append(out, own)
		}
	}
	return out
}

func (p *htmlPage) head(page string, se session, errText string) {
	p.f(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="%s">
<title>clawedge · %s</title>
<link rel="stylesheet" href="/static/style.css">
<script src="/static/app.js" defer></script>
`, se.CSRF, page)
	for _, a := range pageAssets(page) {
		if strings.HasSuffix(a, ".css") {
			p.f(`<link rel="stylesheet" href="/static/%s">`+"\n", a)
		} else {
			p.f(`<script src="/static/%s" defer></script>`+"\n", a)
		}
	}
	p.f(`</head><body data-page="%s">
<header><strong>clawedge</strong>`, page)
	if se.Name != "" {
		p.WriteString("\n<nav>")
		for _, n := range nav {
			// The attribute is markup, not outside text: it is written
			// as it is, never through f, which would escape its quotes.
			if n.page == page {
				p.f(`<a href="%s" aria-current="page">%s</a> `, n.path, n.label)
			} else {
				p.f(`<a href="%s">%s</a> `, n.path, n.label)
			}
		}
		p.f(`</nav>
<span class="who">web:%s (%s)</span>`, se.Name, string(se.Role))
	}
	p.f(`
</header><main>
<p id="status" role="status" aria-live="polite">%s</p>
`, errText)
}

func (p *htmlPage) foot() { p.WriteString("</main></body></html>\n") }

func (s *Server) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { s.renderPage(w, r, name, http.StatusOK, "") }
}

// renderPage writes page name with status, showing note (an error) when set.
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, name string, status int, note string) {
	se := sessionOf(r)
	var p htmlPage
	var body htmlPage
	switch name {
	case "overview":
		s.overviewBody(&body)
	case "pins":
		s.pinsBody(&body, se)
	case "approvals":
		s.approvalsBody(&body, se)
	case "automations":
		s.automationsBody(&body, se)
	case "models":
		s.modelsBody(&body) // models.go
	case "audit":
		if e := s.auditBody(&body, r.URL.Query()); e != "" {
			note = e
		}
	case "sensors":
		if e := s.sensorsBody(&body, r); e != "" { // page_sensors.go
			note = e
		}
	}
	p.head(name, se, note)
	p.WriteString(body.String())
	p.foot()
	writeHTML(w, status, p.String())
}

func writeHTML(w http.ResponseWriter, status int, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(page))
}

func (s *Server) overviewBody(p *htmlPage) {
	p.WriteString("<h1>Overview</h1>\n<dl class=\"facts\">")
	for _, f := range s.Facts.Overview() {
		p.f("<dt>%s</dt><dd>%s</dd>", f.Label, f.Value)
	}
	p.WriteString("</dl>\n")
	s.doctorBody(p) // doctor.go
}

func (s *Server) pinsBody(p *htmlPage, se session) {
	call := se.Role != Viewer
	p.WriteString(`<h1>Pins</h1>
<table id="pins"><thead><tr><th>Pin</th><th class="nh">GPIO</th><th>Mode</th><th>Level</th>`)
	if call {
		p.WriteString("<th>Switch</th>")
	}
	p.WriteString("</tr></thead>\n<tbody>")
	pins := s.Facts.Pins()
	for _, pin := range pins {
		level := fmt.Sprint(pin.Level)
		if pin.Level < 0 {
			level = "error"
		}
		p.f(`<tr data-pin="%s"><td>%s</td><td class="nh">%d</td><td>%s</td><td class="level" data-level="%d">%s</td>`,
			pin.Name, pin.Name, pin.GPIO, pin.Mode, pin.Level, level)
		if call {
			p.WriteString("<td>")
			if pin.Output {
				p.WriteString(`<button type="button" data-write="1">On</button> <button type="button" data-write="0">Off</button> <button type="button" data-pulse="500">Pulse</button>`)
			}
			p.WriteString("</td>")
		}
		p.WriteString("</tr>\n")
	}
	if len(pins) == 0 {
		p.WriteString(`<tr><td colspan="5">No pins configured.</td></tr>`)
	}
	p.WriteString("</tbody></table>\n")
}

func (s *Server) approvalsBody(p *htmlPage, se session) {
	p.WriteString("<h1>Approvals</h1>\n")
	list := s.approvals()
	if len(list) == 0 {
		p.WriteString("<p>Nothing waits for a person.</p>\n")
		return
	}
	p.WriteString(`<ul class="cards">`)
	for _, a := range list {
		p.f(`<li data-approval="%s"><code>%s</code><p>asked by %s on %s, until %s</p>`, a.ID, a.Call, a.User, a.Channel, when(a.Deadline))
		if se.Role == Owner { // a plain form without JavaScript; app.js posts the JSON instead
			p.f(`<form method="post" action="/approvals/%s"><input type="hidden" name="csrf" value="%s">`+
				`<button name="approve" value="true" data-approve="true">Approve</button> <button name="approve" value="false" data-approve="false">Deny</button></form>`, a.ID, se.CSRF)
		}
		p.WriteString("</li>\n")
	}
	p.WriteString("</ul>\n")
}

func (s *Server) automationsBody(p *htmlPage, se session) {
	call := se.Role != Viewer
	p.WriteString(`<h1>Automations</h1>
<table><thead><tr><th>Name</th><th>Trigger</th><th class="nh">Next</th><th class="nh">Last</th><th>Outcome</th>`)
	if call {
		p.WriteString("<th></th>")
	}
	p.WriteString("</tr></thead>\n<tbody>")
	autos := s.Facts.Automations()
	for _, a := range autos {
		paused := ""
		if a.Paused {
			paused = " (paused)"
		}
		p.f(`<tr data-auto="%s"><td>%s%s</td><td>%s</td><td class="nh">%s</td><td class="nh">%s</td><td>%s</td>`, a.Name, a.Name, paused, a.Trigger, a.Next, a.Last, a.Outcome)
		if call {
			if a.Paused {
				p.WriteString(`<td><button type="button" data-tool="auto/resume">Resume</button> `)
			} else {
				p.WriteString(`<td><button type="button" data-tool="auto/pause">Pause</button> `)
			}
			p.WriteString(`<button type="button" data-tool="auto/run">Run now</button></td>`)
		}
		p.WriteString("</tr>\n")
	}
	if len(autos) == 0 {
		p.WriteString(`<tr><td colspan="6">No automations.</td></tr>`)
	}
	p.WriteString("</tbody></table>\n")
}

// auditBody writes the audit page and returns the error to show, if any.
func (s *Server) auditBody(p *htmlPage, query url.Values) string {
	q, err := parseAuditQuery(query)
	var page auditPage
	if err == nil {
		page, err = s.auditRows(q)
	}
	p.f(`<h1>Audit</h1>
<form method="get" action="/audit" class="filter"><label>Caller <input name="caller" value="%s" placeholder="web:phone"></label>
<label>Tool <input name="tool" value="%s" placeholder="gpio/write"></label><button>Filter</button></form>
<table id="audit"><thead><tr><th class="nh">#</th><th>Time</th><th>Who</th><th>Command</th><th>Outcome</th></tr></thead>
<tbody>`, q.Caller, q.Tool)
	for _, e := range page.Entries {
		outcome := "pending"
		if e.Done && e.OK {
			outcome = "ok"
		} else if e.Done {
			outcome = "failed"
		}
		p.f(`<tr><td class="nh">%d</td><td>%s</td><td class="who">%s</td><td><code>%s</code></td><td>%s %s</td></tr>`+"\n",
			e.ID, when(e.Time), e.Who, e.Command, outcome, e.Detail)
	}
	if len(page.Entries) == 0 {
		p.WriteString(`<tr><td colspan="5">No entries.</td></tr>`)
	}
	p.WriteString("</tbody></table>\n")
	if page.Before > 0 {
		next := url.Values{"before": {fmt.Sprint(page.Before)}, "caller": {q.Caller}, "tool": {q.Tool}}
		p.f(`<p><a href="/audit?%s">Older</a></p>`+"\n", next.Encode())
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func (s *Server) pairPage(w http.ResponseWriter, r *http.Request) {
	writeHTML(w, http.StatusOK, pairHTML(""))
}

func pairHTML(errText string) string {
	var p htmlPage
	p.head("pair", session{}, errText)
	p.WriteString(`<h1>Pair this browser</h1>
<p>At the board, run <code>clawedge web pair --name phone</code> and type the code it prints.</p>
<form method="post" action="/pair" id="pair"><label>Code <input name="code" inputmode="numeric" autocomplete="one-time-code" maxlength="16" required autofocus></label>
<button>Pair</button></form>
`)
	p.foot()
	return p.String()
}

// pairForm is pairing without JavaScript: the form's code, the cookie, and
// on to the overview.
func (s *Server) pairForm(w http.ResponseWriter, r *http.Request) {
	if _, status, err := s.redeem(w, r.PostFormValue("code")); err != nil {
		writeHTML(w, status, pairHTML(err.Error()))
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
