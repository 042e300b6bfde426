package web

import (
	"net/http"
)

// The models page: the models on the board and the remote providers
// configured, which one answers first, and how each did last (its speed,
// its last error). Read-only: models are installed and configured at the
// board (clawedge model pull, the config's models section).

// Model is one model the agent may answer with, or one installed on the
// board that no route uses.
type Model struct {
	Name  string `json:"name"`  // the provider's name in the router; a file's name when unused
	Model string `json:"model"` // the model file, or the remote model's id
	Where string `json:"where"` // "on the board", or the remote's host
	// Route is its place: "answers first", "fallback", or "installed, not configured".
	Route     string `json:"route"`
	Calls     int64  `json:"calls"`
	LastSpeed string `json:"last_speed,omitempty"` // the last reply's speed, as status shows it
	LastUsed  string `json:"last_used,omitempty"`
	LastError string `json:"last_error,omitempty"`
}

func (s *Server) apiModels(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.models())
}

func (s *Server) models() []Model {
	if m := s.Facts.Models(); m != nil {
		return m
	}
	return []Model{}
}

func (s *Server) modelsBody(p *htmlPage) {
	p.WriteString(`<h1>Models</h1>
<table id="models"><thead><tr><th>Name</th><th>Model</th><th class="nh">Where</th><th>Route</th><th class="nh">Calls</th><th>Last speed</th><th class="nh">Last used</th></tr></thead>
<tbody>`)
	models := s.models()
	for _, m := range models {
		p.f(`<tr data-model="%s"><td>%s</td><td><code>%s</code></td><td class="nh">%s</td><td>%s</td><td class="nh">%d</td><td>%s</td><td class="nh">%s</td></tr>`+"\n",
			m.Name, m.Name, m.Model, m.Where, m.Route, m.Calls, m.LastSpeed, m.LastUsed)
		if m.LastError != "" {
			p.f(`<tr class="error"><td colspan="7">last error of %s: %s</td></tr>`+"\n", m.Name, m.LastError)
		}
	}
	if len(models) == 0 {
		p.WriteString(`<tr><td colspan="7">No model is configured: commands work, free text does not (docs/models.md).</td></tr>`)
	}
	p.WriteString("</tbody></table>\n<p class=\"hint\">Install with <code>clawedge model pull</code>, configure in the config's <code>models</code> section.</p>\n")
}
