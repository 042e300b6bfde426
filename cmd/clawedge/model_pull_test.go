package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/synth"
)

// synthTiny is a tiny random-weight qwen2 model with a small vocabulary.
func synthTiny(t *testing.T) []byte {
	t.Helper()
	shape, err := synth.LookupShape("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := synth.New(synth.Options{Shape: shape, Type: gguf.Q8_0, Seed: 7, Vocab: testVocab(t)})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// modelServer serves files on 127.0.0.1 with Range support; the first
// response for a path can be cut after some bytes.
type modelServer struct {
	files map[string][]byte

	mu     sync.Mutex
	ranges []string
	cut    int
}

func (s *modelServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if name, ok := strings.CutPrefix(r.URL.Path, "/resolve/"); ok {
		// As Hugging Face's resolve URLs do: a 302 to where the bytes are.
		http.Redirect(w, r, "../repo/"+name, http.StatusFound)
		return
	}
	data, ok := s.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	cut := s.cut
	s.cut = 0
	s.mu.Unlock()
	if cut > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.Write(data[:cut])
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(data))
}

// cutNext makes the next response stop after n body bytes. The server runs in
// goroutines of its own and the client in another process: the race detector sees
// no order between the test and the server but this lock.
func (s *modelServer) cutNext(n int) {
	s.mu.Lock()
	s.cut = n
	s.mu.Unlock()
}

func (s *modelServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

// runSplit runs the binary like runCLI but keeps stdout and stderr apart.
func runSplit(t *testing.T, wantCode int, args ...string) (stdout, stderr string) {
	t.Helper()
	return runSplitEnv(t, wantCode, nil, args...)
}

func runSplitEnv(t *testing.T, wantCode int, env []string, args ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+cmd.Dir), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != wantCode {
		t.Fatalf("clawedge %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, wantCode, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestModelPullListRm(t *testing.T) {
	model := synthTiny(t)
	srv := &modelServer{files: map[string][]byte{
		"/repo/tiny.gguf":  model,
		"/repo/page.gguf":  []byte("<html>not a model</html>"),
		"/repo/other.gguf": model,
	}}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dir := filepath.Join(t.TempDir(), "models")
	url := ts.URL + "/repo/tiny.gguf"

	// A dropped connection leaves a .part and says how to resume.
	srv.cutNext(len(model) / 2)
	out, errOut := runSplit(t, 1, "model", "pull", url, "--sha256", hexSum(model), "--dir", dir)
	if out != "" || !strings.Contains(errOut, "run the same command again to resume") {
		t.Errorf("dropped pull: stdout %q, stderr:\n%s", out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "tiny.gguf.part")); err != nil {
		t.Fatal(err)
	}
	list, _ := runSplit(t, 0, "model", "list", "--dir", dir)
	if !strings.Contains(list, "tiny.gguf.part") || !strings.Contains(list, "unfinished download") {
		t.Errorf("list during a download:\n%s", list)
	}

	// The same command resumes with a Range request and installs the file; the
	// Range goes along a redirect (a Hugging Face resolve URL answers 302).
	out, errOut = runSplit(t, 0, "model", "pull", ts.URL+"/resolve/tiny.gguf", "--sha256", hexSum(model), "--dir", dir)
	want := "installed " + filepath.Join(dir, "tiny.gguf") + ": "
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "sha256 "+hexSum(model)+" (sha256 verified)") || strings.Count(out, "\n") != 1 {
		t.Errorf("pull stdout %q", out)
	}
	if !strings.Contains(errOut, "resuming at") || !strings.Contains(errOut, "100%") {
		t.Errorf("pull stderr (progress) %q", errOut)
	}
	if r := srv.seen(); len(r) != 2 || r[1] != "bytes="+strconv.Itoa(len(model)/2)+"-" {
		t.Errorf("Range headers %q", r)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "tiny.gguf")); err != nil || hexSum(got) != hexSum(model) {
		t.Fatalf("installed file: %v", err)
	}
	out, _ = runSplit(t, 0, "model", "pull", url, "--dir", dir)
	if !strings.Contains(out, "already installed") {
		t.Errorf("second pull: %q", out)
	}

	// Without --sha256: a warning, installed unverified.
	out, errOut = runSplit(t, 0, "model", "pull", ts.URL+"/repo/other.gguf", "--dir", dir)
	if !strings.Contains(errOut, "warning: no --sha256 given") || !strings.Contains(out, "NOT verified") {
		t.Errorf("unverified pull: stdout %q stderr %q", out, errOut)
	}

	// Wrong sum, not GGUF, 404: errors, nothing installed.
	wrong := hexSum([]byte("x"))
	_, errOut = runSplit(t, 1, "model", "pull", ts.URL+"/repo/other.gguf", "--sha256", wrong, "--dir", dir, "--force")
	if !strings.Contains(errOut, "sha256 mismatch: got "+hexSum(model)+", want "+wrong) {
		t.Errorf("wrong sum: %s", errOut)
	}
	_, errOut = runSplit(t, 1, "model", "pull", ts.URL+"/repo/page.gguf", "--dir", dir)
	if !strings.Contains(errOut, "not a GGUF model file") {
		t.Errorf("HTML page: %s", errOut)
	}
	_, errOut = runSplit(t, 1, "model", "pull", ts.URL+"/repo/missing.gguf", "--dir", dir)
	if !strings.Contains(errOut, "404 Not Found") {
		t.Errorf("404: %s", errOut)
	}
	for _, f := range []string{"page.gguf", "page.gguf.part", "missing.gguf", "missing.gguf.part", "other.gguf.part"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind", f)
		}
	}

	// Usage errors.
	_, errOut = runSplit(t, 2, "model", "pull", "qwen9-huge", "--dir", dir)
	if !strings.Contains(errOut, "qwen2.5-0.5b-q4_k_m") {
		t.Errorf("unknown name: %s", errOut)
	}
	runSplit(t, 2, "model", "pull", "qwen2.5-0.5b-q4_k_m", "--sha256", wrong, "--dir", dir)
	runSplit(t, 2, "model", "pull", ts.URL+"/repo/", "--dir", dir)
	runSplit(t, 2, "model", "pull", url, "--sha256", "abc", "--dir", dir)

	list, _ = runSplit(t, 0, "model", "list", "--dir", dir)
	for _, want := range []string{"other.gguf", "tiny.gguf", "qwen2  Q8_0", "qwen2.5-0.5b-q4_k_m", "not installed"} {
		if !strings.Contains(list, want) {
			t.Errorf("list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, ".part") {
		t.Errorf("list shows a .part:\n%s", list)
	}

	// rm refuses to reach outside the folder, and removes what is inside.
	victim := filepath.Join(filepath.Dir(dir), "victim.gguf")
	os.WriteFile(victim, model, 0o644)
	for _, arg := range []string{"../victim.gguf", victim, filepath.Join(dir, "..", "victim.gguf"), ".."} {
		_, errOut = runSplit(t, 2, "model", "rm", arg, "--dir", dir)
		if !strings.Contains(errOut, "not in the models folder") {
			t.Errorf("rm %s: %s", arg, errOut)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Fatal("rm removed a file outside the models folder")
	}
	out, _ = runSplit(t, 0, "model", "rm", "tiny", "--dir", dir)
	if out != "removed "+filepath.Join(dir, "tiny.gguf")+"\n" {
		t.Errorf("rm: %q", out)
	}
	runSplit(t, 1, "model", "rm", "tiny", "--dir", dir)
	list, _ = runSplit(t, 0, "model", "list", "--dir", dir)
	if strings.Contains(list, "tiny.gguf") || !strings.Contains(list, "other.gguf") {
		t.Errorf("list after rm:\n%s", list)
	}
}

// The default folder is data_dir/models of the config.
func TestModelListDefaultDir(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, "")
	out, _ := runSplit(t, 0, "model", "list", "--config", cfgPath)
	if !strings.Contains(out, "installed in "+filepath.Join(dataDir, "models")+":\n  (none)") {
		t.Errorf("list:\n%s", out)
	}
}

// Downloads go through HTTP_PROXY / HTTPS_PROXY when set.
func TestModelPullThroughProxy(t *testing.T) {
	model := synthTiny(t)
	proxy := &modelServer{files: map[string][]byte{"/repo/tiny.gguf": model}}
	var hosts []string
	var mu sync.Mutex
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		proxy.ServeHTTP(w, r) // a proxy sees the absolute URL; serve its path
	}))
	defer ts.Close()
	dir := t.TempDir()
	env := []string{"HTTP_PROXY=" + ts.URL, "http_proxy=" + ts.URL, "NO_PROXY=", "no_proxy="}
	out, _ := runSplitEnv(t, 0, env, "model", "pull", "http://models.invalid/repo/tiny.gguf", "--sha256", hexSum(model), "--dir", dir)
	if !strings.Contains(out, "sha256 verified") {
		t.Errorf("pull: %q", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 1 || hosts[0] != "models.invalid" {
		t.Errorf("proxy saw hosts %q", hosts)
	}
}

// Ctrl-C during a download keeps the .part; the next pull resumes it.
func TestModelPullInterrupted(t *testing.T) {
	model := synthTiny(t)
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") != "" {
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(model))
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(model)))
		w.Write(model[:4096])
		w.(http.Flusher).Flush()
		select { // stall until the client goes away
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer ts.Close()
	defer close(release)
	dir := t.TempDir()
	part := filepath.Join(dir, "tiny.gguf.part")
	cmd := exec.Command(binPath, "model", "pull", ts.URL+"/tiny.gguf", "--sha256", hexSum(model), "--dir", dir)
	cmd.Dir = t.TempDir()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if st, err := os.Stat(part); err == nil && st.Size() == 4096 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no .part of 4096 bytes; stderr:\n%s", stderr.String())
		}
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "interrupt") ||
		!strings.Contains(stderr.String(), "run the same command again to resume") {
		t.Fatalf("interrupted pull: %v\n%s", err, stderr.String())
	}
	if st, err := os.Stat(part); err != nil || st.Size() != 4096 {
		t.Fatalf(".part after Ctrl-C: %v %v", st, err)
	}
	out, errOut := runSplit(t, 0, "model", "pull", ts.URL+"/tiny.gguf", "--sha256", hexSum(model), "--dir", dir)
	if !strings.Contains(out, "sha256 verified") || !strings.Contains(errOut, "resuming at 4.0 KiB") {
		t.Errorf("resumed pull: %q %q", out, errOut)
	}
}
