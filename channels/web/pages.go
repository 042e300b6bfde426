package web

import (
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"time"

	"github.com/clawedge/clawedge/policy"
)

// The pages: rendered here from embedded templates (html/template escapes
// every value by context), readable without JavaScript; assets/app.js adds
// the live pins and the buttons.

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
}).ParseFS(templateFS, "templates/*.html"))

var assets = http.StripPrefix("/static/", http.FileServerFS(mustSub(assetFS, "assets"))).ServeHTTP

// view is what every page template gets.
type view struct {
	Page        string
	Name        string
	Role        Role
	CSRF        string
	CanCall     bool
	CanDecide   bool
	Facts       []Fact
	Pins        []Pin
	Approvals   []policy.Pending
	Automations []Automation
	Audit       auditPage
	Query       auditQuery
	Error       string
}

func (s *Server) page(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		se := sessionOf(r)
		v := view{Page: name, Name: se.Name, Role: se.Role, CSRF: se.CSRF, CanCall: se.Role != Viewer, CanDecide: se.Role == Owner}
		switch name {
		case "overview":
			v.Facts = s.Facts.Overview()
		case "pins":
			v.Pins = s.Facts.Pins()
		case "approvals":
			v.Approvals = s.approvals()
		case "automations":
			v.Automations = s.Facts.Automations()
		case "audit":
			q, err := parseAuditQuery(r.URL.Query())
			if err != nil {
				v.Error = err.Error()
			} else if v.Audit, err = s.auditRows(q); err != nil {
				v.Error = err.Error()
			}
			v.Query = q
		}
		render(w, http.StatusOK, name, v)
	}
}

func render(w http.ResponseWriter, status int, name string, v any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	pages.ExecuteTemplate(w, name+".html", v)
}

func (s *Server) pairPage(w http.ResponseWriter, r *http.Request) {
	render(w, http.StatusOK, "pair", view{Page: "pair"})
}

// pairForm is pairing without JavaScript: the form's code, the cookie, and
// on to the overview.
func (s *Server) pairForm(w http.ResponseWriter, r *http.Request) {
	if _, status, err := s.redeem(w, r.PostFormValue("code")); err != nil {
		render(w, status, "pair", view{Page: "pair", Error: err.Error()})
		return
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func mustSub(f embed.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return sub
}
