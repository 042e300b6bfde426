package web

import "net/http"

// Doctor's findings on the overview: the same checks `clawedge doctor`
// runs, as far as they make sense inside the running daemon (the daemon
// hands them in through Facts.Doctor, nil while they first run; this
// package runs none itself).

// Finding is one doctor check.
type Finding struct {
	What   string `json:"what"`
	Status string `json:"status"` // "ok", "warn" or "fail"
	Info   string `json:"info"`
	Fix    string `json:"fix,omitempty"`
}

func (s *Server) apiDoctor(w http.ResponseWriter, r *http.Request) {
	f := s.Facts.Doctor()
	if f == nil {
		f = []Finding{} // not checked yet
	}
	writeJSON(w, http.StatusOK, f)
}

// doctorBody writes the findings, the failures and warnings first: they
// are what a person opening the overview should see.
func (s *Server) doctorBody(p *htmlPage) {
	all := s.Facts.Doctor()
	p.WriteString("<h2>Doctor</h2>\n")
	switch {
	case all == nil: // the daemon runs the checks in the background; a page does not wait
		p.WriteString("<p>Doctor's checks are running; reload in a moment.</p>\n")
		return
	case len(all) == 0:
		p.WriteString("<p>No findings.</p>\n")
		return
	}
	p.WriteString(`<ul id="doctor" class="findings">`)
	for rank := range 3 {
		for _, f := range all {
			if severity(f.Status) != rank {
				continue
			}
			p.f(`<li class="%s"><span class="mark">%s</span> <strong>%s</strong>: %s`, f.Status, f.Status, f.What, f.Info)
			if f.Fix != "" && f.Status != "ok" {
				p.f(`<br><span class="fix">fix: %s</span>`, f.Fix)
			}
			p.WriteString("</li>\n")
		}
	}
	p.WriteString("</ul>\n")
}

// severity orders findings: failures, then warnings, then the rest.
func severity(status string) int {
	switch status {
	case "fail":
		return 0
	case "warn":
		return 1
	}
	return 2
}
