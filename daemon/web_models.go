package daemon

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// Models is the dashboard's models page: the router's providers in its
// order (which answers first, how each did), then the model files in
// data_dir/models that no route uses. A remote's address is shown by its
// host alone: a base_url may carry a user and password.
func (f webFacts) Models() []web.Model {
	a := f.a
	var out []web.Model
	configured := map[string]bool{}
	if a.router != nil {
		stats := a.router.Stats()
		for i, s := range stats {
			m := web.Model{Name: s.Name, Model: s.Model, Route: routeOf(a.router.Strategy(), s, i, len(stats)),
				Calls: s.Calls, LastError: s.LastError}
			if !s.LastUsed.IsZero() {
				m.LastUsed = s.LastUsed.Local().Format("2006-01-02 15:04")
			}
			if s.Local {
				m.Where = "on the board"
				if a.cfg != nil && a.cfg.Models.Local != nil {
					m.Model = filepath.Base(a.cfg.Models.Local.Path)
					configured[m.Model] = true
				}
				if a.local != nil {
					if last := a.local.LastReply(); last != nil {
						m.LastSpeed = last.Speed()
					}
				}
			} else {
				m.Where = remoteHost(a, s.Name)
				if s.Replies > 0 && s.Latency > 0 {
					m.LastSpeed = fmt.Sprintf("%.1f tokens/s over %d replies", float64(s.TokensOut)/s.Latency.Seconds(), s.Replies)
				}
			}
			out = append(out, m)
		}
	}
	if a.cfg != nil {
		out = append(out, unusedModelFiles(filepath.Join(a.cfg.DataDir, "models"), configured)...)
	}
	return out
}

// unusedModelFiles are the *.gguf files in dir that no route uses, named
// from the catalog by name and size. Their headers are not read (as model
// list does): a header holds the tokenizer, megabytes, and a page must load
// in milliseconds.
func unusedModelFiles(dir string, configured map[string]bool) []web.Model {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []web.Model
	for _, de := range ents {
		name := de.Name()
		if !strings.HasSuffix(strings.ToLower(name), ".gguf") || configured[name] {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, name)) // follows a link to a model kept elsewhere
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		what := modelfiles.FormatBytes(st.Size())
		if e, ok := modelfiles.Match(name, st.Size()); ok {
			what = e.Model + " " + e.Quant + ", " + what
		}
		out = append(out, web.Model{Name: name, Model: what, Where: "on the board", Route: "installed, not configured"})
	}
	return out
}

// routeOf says when the router asks the i-th of n providers.
func routeOf(strategy router.Strategy, s router.Stats, i, n int) string {
	switch {
	case n == 1:
		return "answers"
	case strategy == router.LocalFirst && s.Local:
		return "answers first (local-first)"
	case strategy == router.LocalFirst:
		return "when the local model cannot (local-first)"
	case strategy == router.Fallback && i == 0:
		return "answers first (fallback order)"
	case strategy == router.Fallback:
		return fmt.Sprintf("number %d in the fallback order", i+1)
	}
	r := "chosen by " + string(strategy)
	if s.LastRoute != "" {
		r += "; last: " + s.LastRoute
	}
	return r
}

// remoteHost is the host of the remote named name, or its kind's default.
func remoteHost(a *Core, name string) string {
	if a.cfg == nil {
		return "remote"
	}
	for _, r := range a.cfg.Models.Remote {
		if r.Name != name {
			continue
		}
		if u, err := url.Parse(r.BaseURL); err == nil && u.Host != "" {
			return u.Host
		}
		return r.Kind + " (its public API)"
	}
	return "remote"
}

// webDoctorEvery is how long the overview shows the same doctor findings:
// some checks read the disk or start the runner once.
const webDoctorEvery = time.Minute
