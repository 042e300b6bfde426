package doctor

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
)

// wantCheck fails unless c failed (or passed) with info and fix holding the
// given words.
func wantCheck(t *testing.T, name string, c Check, ok bool, info, fix string) {
	t.Helper()
	if c.OK != ok || !strings.Contains(c.Info, info) || !strings.Contains(c.Fix, fix) {
		t.Errorf("%s: got ok=%v info %q fix %q; want ok=%v, info with %q, fix with %q", name, c.OK, c.Info, c.Fix, ok, info, fix)
	}
}

func TestDoctorRunner(t *testing.T) {
	missing := func() (string, error) { return "", errors.New("local model runner clawedge-llm not found") }
	wantCheck(t, "no runner", Runner(missing), false, "not found", "make")

	// A runner whose libraries the dynamic loader cannot find says so the
	// way ld.so does, and exits 127.
	dir := t.TempDir()
	broken := filepath.Join(dir, "clawedge-llm")
	os.WriteFile(broken, []byte("#!/bin/sh\necho 'clawedge-llm: error while loading shared libraries: libllama.so: cannot open shared object file' >&2\nexit 127\n"), 0o755)
	wantCheck(t, "libraries missing", Runner(func() (string, error) { return broken, nil }), false, "libllama.so", "../lib")

	// The runner sees none of the config's secrets.
	t.Setenv("TELEGRAM_TOKEN", "123:SECRET")
	envDump := filepath.Join(dir, "env-runner")
	os.WriteFile(envDump, []byte("#!/bin/sh\nif env | grep -q SECRET; then exit 1; fi\necho clawedge-llm fake\n"), 0o755)
	wantCheck(t, "environment", Runner(func() (string, error) { return envDump, nil }), true, "clawedge-llm fake", "")
}

func TestDoctorRemote(t *testing.T) {
	srv := openaitest.New(t)
	model := config.RemoteModel{Name: "box", Kind: "openai", BaseURL: srv.URL, Model: "qwen", APIKey: config.Secret("sk-SECRET-KEY")}
	srv.Push(openaitest.Text("OK"))
	wantCheck(t, "answering", RemoteModel(model, 5*time.Second), true, "answered", "")
	if got := srv.Requests()[0]; got.Header.Get("Authorization") != "Bearer sk-SECRET-KEY" || got.Body.MaxTokens != 1 {
		t.Errorf("the tiny request: %+v", got)
	}

	srv.Push(openaitest.Reply{Status: 401, Message: "Incorrect API key provided"})
	c := RemoteModel(model, 5*time.Second)
	wantCheck(t, "refusing the key", c, false, "401", "refused the key")
	if strings.Contains(c.Info+c.Fix, "SECRET") {
		t.Errorf("the key was printed: %q %q", c.Info, c.Fix)
	}

	srv.Push(openaitest.Reply{Status: 404, Message: "model not found"})
	wantCheck(t, "unknown model", RemoteModel(model, 5*time.Second), false, "404", "model name or base_url")

	// Nothing listens on a port just closed.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	model.BaseURL = "http://" + l.Addr().String() + "/v1"
	wantCheck(t, "unreachable", RemoteModel(model, 5*time.Second), false, "box", "cannot reach it")

	model.Kind = "ollama"
	wantCheck(t, "unknown kind", RemoteModel(model, 5*time.Second), false, "ollama", "docs/remote-models.md")
}

func TestDoctorClock(t *testing.T) {
	installed := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	synced := func(ok bool) func() (bool, error) { return func() (bool, error) { return ok, nil } }
	wantCheck(t, "1970 on a Pi without network", Clock(time.Unix(0, 0), installed, synced(false)), false, "1970-01-01", "NTP")
	c := Clock(installed.Add(time.Hour), installed, synced(false))
	wantCheck(t, "unsynchronized", c, true, "not synchronized", "NTP")
	if !c.Warn {
		t.Errorf("an unsynchronized clock is not a warning: %+v", c)
	}
	if c := Clock(installed.Add(time.Hour), installed, synced(true)); !c.OK || c.Warn {
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
	wantCheck(t, "disk nearly full", Disk("/data", statfs(1000, 1<<20)), false, "below 100.0 MiB", "clawedge model rm")
	c := Disk("/data", statfs(40000, 1<<20)) // 156 MiB free of 4 GiB
	wantCheck(t, "disk under 5% free", c, true, "156", "clawedge model rm")
	if !c.Warn {
		t.Errorf("under 5%% free is not a warning: %+v", c)
	}
	if c := Disk("/data", statfs(1<<19, 1<<20)); !c.OK || c.Warn {
		t.Errorf("half free: %+v", c)
	}
	wantCheck(t, "no data_dir", Disk(filepath.Join(t.TempDir(), "none"), syscall.Statfs), false, "no such file", "data_dir")
}
