package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/llm/router"
)

// The models page names a remote by its host alone: a base_url may carry a
// user and password, which must not reach a page.
func TestWebModelsHideCredentials(t *testing.T) {
	a := newCore(&config.Config{DataDir: t.TempDir(), Models: config.Models{Remote: []config.RemoteModel{
		{Name: "lan", Kind: "openai", BaseURL: "https://me:s3cret@192.168.1.5:8443/v1"},
		{Name: "claude", Kind: "anthropic"},
	}}}, Options{})
	if h := remoteHost(a, "lan"); h != "192.168.1.5:8443" {
		t.Errorf("lan: %q", h)
	}
	if h := remoteHost(a, "claude"); h != "anthropic (its public API)" {
		t.Errorf("claude: %q", h)
	}
	for _, m := range (webFacts{a: a}).Models() {
		if strings.Contains(m.Where+m.Model+m.Name, "s3cret") {
			t.Errorf("a password on the page: %+v", m)
		}
	}
}

func TestWebModelsRoute(t *testing.T) {
	local, lan := router.Stats{Name: "local", Local: true}, router.Stats{Name: "lan", LastRoute: "quality 8"}
	for _, c := range []struct {
		strategy router.Strategy
		s        router.Stats
		i, n     int
		want     string
	}{
		{router.LocalFirst, local, 0, 1, "answers"},
		{router.LocalFirst, local, 0, 2, "answers first (local-first)"},
		{router.LocalFirst, lan, 1, 2, "when the local model cannot (local-first)"},
		{router.Fallback, lan, 1, 3, "number 2 in the fallback order"},
		{router.Quality, lan, 1, 2, "chosen by quality; last: quality 8"},
	} {
		if got := routeOf(c.strategy, c.s, c.i, c.n); got != c.want {
			t.Errorf("%s %s %d/%d: %q, want %q", c.strategy, c.s.Name, c.i, c.n, got, c.want)
		}
	}
}

// Doctor's findings never hold a page: the first call starts the checks
// and returns nil; the findings come later, in the background.
func TestWebDoctorInBackground(t *testing.T) {
	release := make(chan struct{})
	a := newCore(&config.Config{DataDir: t.TempDir()}, Options{Findings: func(cfg *config.Config) []web.Finding {
		<-release // checks that take their time
		return []web.Finding{{What: "data_dir", Status: "ok", Info: cfg.DataDir}, {What: "disk space", Status: "ok"}}
	}})
	f := webFacts{a: a, doctor: &webDoctor{a: a}}
	if got := f.Doctor(); got != nil {
		t.Fatalf("the first call waited for the checks: %+v", got)
	}
	if got := f.Doctor(); got != nil {
		t.Fatalf("the second call, while the checks run, waited for them: %+v", got)
	}
	close(release)
	deadline := time.Now().Add(30 * time.Second)
	for f.Doctor() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no findings after 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	found := map[string]string{}
	for _, x := range f.Doctor() {
		found[x.What] = x.Status
	}
	if found["data_dir"] != "ok" || found["disk space"] == "" {
		t.Errorf("findings %+v", found)
	}
}

// Model files no route uses are listed without reading their headers; the
// configured one is not listed twice, nor a file that is not a model.
func TestWebModelsUnusedFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"used.gguf", "spare.gguf", "notes.txt", "half.gguf.part"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("not a real header"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := unusedModelFiles(dir, map[string]bool{"used.gguf": true})
	if len(got) != 1 || got[0].Name != "spare.gguf" || got[0].Route != "installed, not configured" || got[0].Model == "" {
		t.Errorf("%+v", got)
	}
}
