package web

// The skills page: the installed skills with their signer, their tools and
// the rights each declares, the skills refused at load and why; install from
// an uploaded .tar.gz and remove. Installing is two steps, as at the
// terminal (`clawedge skill install`): the upload is verified by skill/check
// and what it would grant is shown; only the owner's confirmation, a second
// form naming the upload by its sha256, installs it (skill/install). Both,
// and skill/remove, are calls by web:NAME on the call path: the authorizer
// decides (install and remove are board-only: an owner's browser that
// policy.owners names), the audit records. The page works without
// JavaScript: plain forms, the upload a multipart form whose first field is
// the CSRF token (guard.go).

import (
	"io"
	"net/http"
	"time"
)

// SkillInfo is one installed skill as the page shows it.
type SkillInfo struct {
	Name        string
	Description string
	SignedBy    string // "" : unsigned
	Tools       int
	Granted     bool   // its tools allowed at install
	Declares    string // what it declares, as `clawedge skill show` prints it
}

// SkillFacts is what the skills page reads of the daemon, and where an
// upload waits for a call to check or install it.
type SkillFacts interface {
	// Skills are the installed skills, and why each refused one is.
	Skills() (installed []SkillInfo, refused []string)
	// Stage keeps an uploaded archive (bounded) and returns its id, the
	// sha256 skill/check and skill/install name it by. Nothing is verified
	// or installed.
	Stage(r io.Reader) (string, error)
	// Discard forgets an upload that was refused.
	Discard(id string)
}

const skillsUploadPath = "/skills/upload"

// An upload's bounds: the largest archive the skills package accepts and a
// little for the form around it; time for a phone on a slow Wi-Fi to send it.
const (
	maxUpload  = 18 << 20
	uploadTime = 2 * time.Minute
)

func (s *Server) skillsRoutes() []route {
	return []route{
		{"GET /skills", read, s.guard(s.skillsPage, true)},
		{"POST " + skillsUploadPath, call, s.guard(s.skillsUpload, true)},
		{"POST /skills/install", call, s.guard(s.skillsInstall, true)},
		{"POST /skills/remove", call, s.guard(s.skillsRemove, true)},
	}
}

func (s *Server) skillsPage(w http.ResponseWriter, r *http.Request) {
	s.writeSkills(w, sessionOf(r), http.StatusOK, "")
}

// writeSkills writes the skills page with note (what the last call said).
func (s *Server) writeSkills(w http.ResponseWriter, se session, status int, note string) {
	var b htmlPage
	b.WriteString("<h1>Skills</h1>\n")
	if s.Skills == nil {
		b.WriteString("<p>Skills are off on this board.</p>\n")
	} else {
		installed, refused := s.Skills.Skills()
		if len(installed) == 0 {
			b.WriteString("<p>No skill is installed.</p>\n")
		}
		b.WriteString(`<ul class="cards" id="skills">`)
		for _, k := range installed {
			signed := "unsigned: nobody you trust vouches for its files"
			if k.SignedBy != "" {
				signed = "signed by " + k.SignedBy
			}
			pol := "instructions only"
			if k.Tools > 0 {
				pol = "its tools are denied until a policy rule names them"
				if k.Granted {
					pol = "its tools were allowed at install"
				}
			}
			b.f(`<li data-skill="%s"><h2>%s</h2><p>%s</p><p>%s; %d tool(s): %s</p><details><summary>What it declares</summary><pre class="plan">%s</pre></details>`,
				k.Name, k.Name, k.Description, signed, k.Tools, pol, k.Declares)
			if se.Role == Owner {
				b.f(`<form method="post" action="/skills/remove"><input type="hidden" name="csrf" value="%s"><input type="hidden" name="name" value="%s"><button>Remove %s</button></form>`,
					se.CSRF, k.Name, k.Name)
			}
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul>\n")
		if len(refused) > 0 {
			b.WriteString(`<h2>Refused at load</h2><ul id="refused">`)
			for _, why := range refused {
				b.f("<li>%s</li>", why)
			}
			b.WriteString("</ul>\n")
		}
		if se.Role == Owner {
			b.f(`<h2>Install a skill</h2>
<form method="post" action="%s" enctype="multipart/form-data" id="skill-upload"><input type="hidden" name="csrf" value="%s">
<label>Skill archive (.tar.gz) <input type="file" name="archive" accept=".tar.gz,.tgz,application/gzip" required></label>
<button>Check it</button></form>
<p class="hint">It is verified (its signature by a key of <code>skills.trust</code>) and what it declares is shown; nothing is installed before you confirm.</p>
`, skillsUploadPath, se.CSRF)
		}
	}
	s.writeBody(w, "skills", se, status, note, b.String())
}

// writeBody writes a page of this file's with its header.
func (s *Server) writeBody(w http.ResponseWriter, page string, se session, status int, note, body string) {
	var p htmlPage
	p.head(page, se, note)
	p.WriteString(body)
	p.foot()
	writeHTML(w, status, p.String())
}

// skillsUpload keeps the uploaded archive and checks it (skill/check): a
// refusal is shown with its reason and the upload forgotten; otherwise what
// it declares is shown with the form that installs it.
func (s *Server) skillsUpload(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	if s.Skills == nil {
		s.writeSkills(w, se, http.StatusNotFound, "skills are off on this board")
		return
	}
	// The file's time to arrive, given only now: a request without a
	// session or token was refused within the server's read timeout.
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadTime))
	mr := partsOf(r)
	if mr == nil {
		s.writeSkills(w, se, http.StatusBadRequest, "send the archive as a form's file (multipart/form-data, the csrf field first)")
		return
	}
	part, err := mr.NextPart()
	if err != nil || part.FormName() != "archive" {
		s.writeSkills(w, se, http.StatusBadRequest, "the form has no archive file after its csrf field")
		return
	}
	id, err := s.Skills.Stage(part)
	if err != nil {
		s.writeSkills(w, se, http.StatusBadRequest, "upload refused: "+err.Error())
		return
	}
	res := s.formCall(w, r, "skill/check", map[string]any{"upload": id})
	if res.Failed {
		s.Skills.Discard(id)
		s.writeSkills(w, se, callStatus(res), "not installed: "+res.Text)
		return
	}
	name, _ := res.Fields["name"].(string)
	tools, _ := res.Fields["tools"].(int64)
	var b htmlPage
	b.f(`<h1>Install %s?</h1>
<p>This is what the skill declares. Nothing is installed until you confirm.</p>
<pre class="plan" id="plan">%s</pre>
<form method="post" action="/skills/install" id="skill-install"><input type="hidden" name="csrf" value="%s"><input type="hidden" name="upload" value="%s">
`, name, res.Text, se.CSRF, id)
	if tools > 0 {
		b.WriteString(`<p><label><input type="checkbox" name="grant" value="true"> Allow its tools now, without a policy rule naming them</label></p>
`)
	}
	b.f(`<button>Install %s</button> <a href="/skills">Cancel</a></form>
`, name)
	s.writeBody(w, "skills", se, http.StatusOK, "", b.String())
}

func (s *Server) skillsInstall(w http.ResponseWriter, r *http.Request) {
	res := s.formCall(w, r, "skill/install", map[string]any{"upload": r.PostFormValue("upload"), "grant": r.PostFormValue("grant") == "true"})
	s.writeSkills(w, sessionOf(r), callStatus(res), res.Text)
}

func (s *Server) skillsRemove(w http.ResponseWriter, r *http.Request) {
	res := s.formCall(w, r, "skill/remove", map[string]any{"name": r.PostFormValue("name")})
	s.writeSkills(w, sessionOf(r), callStatus(res), res.Text)
}
