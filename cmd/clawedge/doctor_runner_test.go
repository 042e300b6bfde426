package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/doctor"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// TestDoctorRealRunner: the runner built from this tree starts and reports
// its CPU backend.
func TestDoctorRealRunner(t *testing.T) {
	needLocalModel(t)
	runner := filepath.Join(filepath.Dir(binPath), "clawedge-llm")
	wantCheck(t, "built runner", doctor.Runner(func() (string, error) { return runner, nil }), true, "clawedge-llm", "")
}

// wantCheck fails unless c failed (or passed) with info and fix holding the
// given words.
func wantCheck(t *testing.T, name string, c doctor.Check, ok bool, info, fix string) {
	t.Helper()
	if c.OK != ok || !strings.Contains(c.Info, info) || !strings.Contains(c.Fix, fix) {
		t.Errorf("%s: got ok=%v info %q fix %q; want ok=%v, info with %q, fix with %q", name, c.OK, c.Info, c.Fix, ok, info, fix)
	}
}

func TestDoctorModelFile(t *testing.T) {
	dir := t.TempDir()
	meminfo := func(kb string) string {
		p := filepath.Join(dir, "meminfo-"+kb)
		os.WriteFile(p, []byte("MemTotal: 999999999 kB\nMemAvailable: "+kb+" kB\n"), 0o644)
		return p
	}
	plenty := meminfo("99999999")

	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, []byte("<html>not found</html>"), 0o644)
	wantCheck(t, "bad model file", doctor.ModelFile(&config.LocalModel{Path: bad}, plenty), false, "bad.gguf", "clawedge model pull")
	wantCheck(t, "no model file", doctor.ModelFile(&config.LocalModel{Path: filepath.Join(dir, "none.gguf")}, plenty), false, "none.gguf", "models.local.path")

	good := synthModel(t, "micro", gguf.F16, testVocab(t))
	wantCheck(t, "a model that fits", doctor.ModelFile(&config.LocalModel{Path: good}, plenty), true, "fits", "")
	wantCheck(t, "model too big", doctor.ModelFile(&config.LocalModel{Path: good}, meminfo("100")), false, "needs about", "smaller model")
}
