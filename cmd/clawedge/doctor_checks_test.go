package main

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// wantCheck fails unless c failed (or passed) with info and fix holding the
// given words.
func wantCheck(t *testing.T, name string, c check, ok bool, info, fix string) {
	t.Helper()
	if c.ok != ok || !strings.Contains(c.info, info) || !strings.Contains(c.fix, fix) {
		t.Errorf("%s: got ok=%v info %q fix %q; want ok=%v, info with %q, fix with %q", name, c.ok, c.info, c.fix, ok, info, fix)
	}
}

func TestDoctorRunner(t *testing.T) {
	missing := func() (string, error) { return "", errors.New("local model runner clawedge-llm not found") }
	wantCheck(t, "no runner", runnerCheck(missing), false, "not found", "make")

	// A runner whose libraries the dynamic loader cannot find says so the
	// way ld.so does, and exits 127.
	dir := t.TempDir()
	broken := filepath.Join(dir, "clawedge-llm")
	os.WriteFile(broken, []byte("#!/bin/sh\necho 'clawedge-llm: error while loading shared libraries: libllama.so: cannot open shared object file' >&2\nexit 127\n"), 0o755)
	wantCheck(t, "libraries missing", runnerCheck(func() (string, error) { return broken, nil }), false, "libllama.so", "../lib")

	// The runner sees none of the config's secrets.
	t.Setenv("TELEGRAM_TOKEN", "123:SECRET")
	envDump := filepath.Join(dir, "env-runner")
	os.WriteFile(envDump, []byte("#!/bin/sh\nif env | grep -q SECRET; then exit 1; fi\necho clawedge-llm fake\n"), 0o755)
	wantCheck(t, "environment", runnerCheck(func() (string, error) { return envDump, nil }), true, "clawedge-llm fake", "")
}

// TestDoctorRealRunner: the runner built from this tree starts and reports
// its CPU backend.
func TestDoctorRealRunner(t *testing.T) {
	needLocalModel(t)
	runner := filepath.Join(filepath.Dir(binPath), "clawedge-llm")
	wantCheck(t, "built runner", runnerCheck(func() (string, error) { return runner, nil }), true, "clawedge-llm", "")
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
	wantCheck(t, "bad model file", modelFileCheck(&config.LocalModel{Path: bad}, plenty), false, "bad.gguf", "clawedge model pull")
	wantCheck(t, "no model file", modelFileCheck(&config.LocalModel{Path: filepath.Join(dir, "none.gguf")}, plenty), false, "none.gguf", "models.local.path")

	good := synthModel(t, "micro", gguf.F16, testVocab(t))
	wantCheck(t, "a model that fits", modelFileCheck(&config.LocalModel{Path: good}, plenty), true, "fits", "")
	wantCheck(t, "model too big", modelFileCheck(&config.LocalModel{Path: good}, meminfo("100")), false, "needs about", "smaller model")
}

func TestDoctorRemote(t *testing.T) {
	srv := openaitest.New(t)
	model := config.RemoteModel{Name: "box", Kind: "openai", BaseURL: srv.URL, Model: "qwen", APIKey: config.Secret("sk-SECRET-KEY")}
	srv.Push(openaitest.Text("OK"))
	wantCheck(t, "answering", remoteCheck(model, 5*time.Second), true, "answered", "")
	if got := srv.Requests()[0]; got.Header.Get("Authorization") != "Bearer sk-SECRET-KEY" || got.Body.MaxTokens != 1 {
		t.Errorf("the tiny request: %+v", got)
	}

	srv.Push(openaitest.Reply{Status: 401, Message: "Incorrect API key provided"})
	c := remoteCheck(model, 5*time.Second)
	wantCheck(t, "refusing the key", c, false, "401", "refused the key")
	if strings.Contains(c.info+c.fix, "SECRET") {
		t.Errorf("the key was printed: %q %q", c.info, c.fix)
	}

	srv.Push(openaitest.Reply{Status: 404, Message: "model not found"})
	wantCheck(t, "unknown model", remoteCheck(model, 5*time.Second), false, "404", "model name or base_url")

	// Nothing listens on a port just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	model.BaseURL = "http://" + l.Addr().String() + "/v1"
	wantCheck(t, "unreachable", remoteCheck(model, 5*time.Second), false, "box", "cannot reach it")

	model.Kind = "ollama"
	wantCheck(t, "unknown kind", remoteCheck(model, 5*time.Second), false, "ollama", "docs/remote-models.md")
}

func TestDoctorClock(t *testing.T) {
	installed := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	synced := func(ok bool) func() (bool, error) { return func() (bool, error) { return ok, nil } }
	wantCheck(t, "1970 on a Pi without network", clockCheck(time.Unix(0, 0), installed, synced(false)), false, "1970-01-01", "NTP")
	c := clockCheck(installed.Add(time.Hour), installed, synced(false))
	wantCheck(t, "unsynchronized", c, true, "not synchronized", "NTP")
	if !c.warn {
		t.Errorf("an unsynchronized clock is not a warning: %+v", c)
	}
	if c := clockCheck(installed.Add(time.Hour), installed, synced(true)); !c.ok || c.warn {
		t.Errorf("a synchronized clock: %+v", c)
	}
}

func TestDoctorDisk(t *testing.T) {
	statfs := func(freeBlocks, blocks uint64) func(string, *syscall.Statfs_t) error {
		return func(_ string, st *syscall.Statfs_t) error {
			st.Bsize, st.Bavail, st.Blocks = 4096, freeBlocks, blocks
			return nil
		}
	}
	wantCheck(t, "disk nearly full", diskCheck("/data", statfs(1000, 1<<20)), false, "below 100.0 MiB", "clawedge model rm")
	c := diskCheck("/data", statfs(40000, 1<<20)) // 156 MiB free of 4 GiB
	wantCheck(t, "disk under 5% free", c, true, "156", "clawedge model rm")
	if !c.warn {
		t.Errorf("under 5%% free is not a warning: %+v", c)
	}
	if c := diskCheck("/data", statfs(1<<19, 1<<20)); !c.ok || c.warn {
		t.Errorf("half free: %+v", c)
	}
	wantCheck(t, "no data_dir", diskCheck(filepath.Join(t.TempDir(), "none"), syscall.Statfs), false, "no such file", "data_dir")
}
