package modelfiles

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/internal/httpclient/rawserver"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// tinyGGUF is a small valid GGUF file: qwen2 metadata and one Q8_0 matrix
// of random bytes, about 70 KB.
func tinyGGUF(t testing.TB) []byte {
	t.Helper()
	kv := []gguf.KV{
		{Key: "general.architecture", Value: gguf.String("qwen2")},
		{Key: "general.name", Value: gguf.String("tiny test")},
		{Key: "qwen2.context_length", Value: gguf.Uint32(4096)},
	}
	tensors := []gguf.TensorInfo{{Name: "token_embd.weight", Dims: []uint64{256, 256}, Type: gguf.Q8_0}}
	var buf bytes.Buffer
	w, err := gguf.NewWriter(&buf, kv, tensors)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, tensors[0].Bytes())
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fileServer serves one file with Range support, and can misbehave.
type fileServer struct {
	data []byte

	mu          sync.Mutex
	ranges      []string // the Range header of every request ("" for none)
	cutAfter    int      // the next response stops after this many body bytes and drops the connection
	stallAfter  int      // the next response sends this many body bytes, then nothing
	ignoreRange bool
	status      int // answer every request with this status
}

func (s *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.ranges = append(s.ranges, r.Header.Get("Range"))
	cut, stall, ignore, status := s.cutAfter, s.stallAfter, s.ignoreRange, s.status
	s.cutAfter, s.stallAfter = 0, 0
	s.mu.Unlock()
	if status != 0 {
		http.Error(w, http.StatusText(status), status)
		return
	}
	if ignore {
		r.Header.Del("Range")
	}
	if cut > 0 || stall > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(s.data)))
		w.WriteHeader(http.StatusOK)
		n := max(cut, stall)
		w.Write(s.data[:n])
		w.(http.Flusher).Flush()
		if stall > 0 {
			<-r.Context().Done() // until the client gives up
		}
		panic(http.ErrAbortHandler) // drop the connection mid-body
	}
	http.ServeContent(w, r, "model.gguf", time.Time{}, bytes.NewReader(s.data))
}

func (s *fileServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.ranges...)
}

func serve(t *testing.T, data []byte) (*fileServer, string) {
	t.Helper()
	fs := &fileServer{data: data}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	return fs, srv.URL + "/models/tiny.gguf"
}

func request(url, dir string, data []byte) Request {
	return Request{URL: url, Dir: dir, File: "tiny.gguf", Size: int64(len(data)), SHA256: sum(data), IdleTimeout: 5 * time.Second}
}

func assertInstalled(t *testing.T, dir string, data []byte) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, "tiny.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("installed file differs: %d bytes, sha256 %s", len(got), sum(got))
	}
	if _, err := os.Stat(filepath.Join(dir, "tiny.gguf.part")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf(".part left behind: %v", err)
	}
}

func assertNothing(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left in the models folder: %s", e.Name())
	}
}

func TestDownloadInstallsVerifiedFile(t *testing.T) {
	data := tinyGGUF(t)
	fs, url := serve(t, data)
	dir := filepath.Join(t.TempDir(), "models") // created by Download
	req := request(url, dir, data)
	var last, lastTotal int64
	req.Progress = func(done, total int64) { last, lastTotal = done, total }
	res, err := Download(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.SHA256 != sum(data) || res.Size != int64(len(data)) || res.Resumed != 0 {
		t.Errorf("result %+v", res)
	}
	if last != int64(len(data)) || lastTotal != int64(len(data)) {
		t.Errorf("last progress %d/%d, want %d", last, lastTotal, len(data))
	}
	assertInstalled(t, dir, data)
	if r := fs.seen(); len(r) != 1 || r[0] != "" {
		t.Errorf("requests with Range %q, want one without", r)
	}

	// Installed: a second pull is refused, unless it replaces the file.
	if _, err := Download(context.Background(), req); !errors.Is(err, ErrExists) {
		t.Errorf("second pull: %v, want ErrExists", err)
	}
	req.Replace = true
	if _, err := Download(context.Background(), req); err != nil {
		t.Errorf("replace: %v", err)
	}
	assertInstalled(t, dir, data)
}

func TestDownloadResumesAfterDroppedConnection(t *testing.T) {
	data := tinyGGUF(t)
	fs, url := serve(t, data)
	dir := t.TempDir()
	cut := len(data) / 3
	fs.cutAfter = cut
	_, err := Download(context.Background(), request(url, dir, data))
	var ie *InterruptedError
	if !errors.As(err, &ie) {
		t.Fatalf("dropped connection: %v, want an InterruptedError", err)
	}
	if ie.Have != int64(cut) || !strings.Contains(err.Error(), "run the same command again to resume") {
		t.Errorf("interrupted at %d (want %d): %v", ie.Have, cut, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tiny.gguf")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("a partial download was installed")
	}
	if st, err := os.Stat(filepath.Join(dir, "tiny.gguf.part")); err != nil || st.Size() != int64(cut) {
		t.Fatalf(".part after the drop: %v, %v", st, err)
	}

	var notes []string
	req := request(url, dir, data)
	req.Notify = func(m string) { notes = append(notes, m) }
	res, err := Download(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != int64(cut) || res.SHA256 != sum(data) {
		t.Errorf("resumed %d bytes (want %d), sha256 %s", res.Resumed, cut, res.SHA256)
	}
	assertInstalled(t, dir, data)
	if r := fs.seen(); len(r) != 2 || r[1] != "bytes="+strconv.Itoa(cut)+"-" {
		t.Errorf("Range headers %q, want the second to be bytes=%d-", r, cut)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "resuming at") {
		t.Errorf("notes %q", notes)
	}
}

func TestDownloadStartsOverWhenServerIgnoresRange(t *testing.T) {
	data := tinyGGUF(t)
	fs, url := serve(t, data)
	fs.ignoreRange = true
	dir := t.TempDir()
	// A .part of wrong bytes: were they kept, the sum would be wrong.
	if err := os.WriteFile(filepath.Join(dir, "tiny.gguf.part"), bytes.Repeat([]byte{0xAA}, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	var notes []string
	req := request(url, dir, data)
	req.Notify = func(m string) { notes = append(notes, m) }
	res, err := Download(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 0 {
		t.Errorf("resumed %d bytes from a server that ignores ranges", res.Resumed)
	}
	assertInstalled(t, dir, data)
	if r := fs.seen(); len(r) != 1 || r[0] != "bytes=1000-" {
		t.Errorf("Range headers %q", r)
	}
	if !strings.Contains(strings.Join(notes, "\n"), "starting over") {
		t.Errorf("notes %q", notes)
	}
}

func TestDownloadWrongHashInstallsNothing(t *testing.T) {
	data := tinyGGUF(t)
	_, url := serve(t, data)
	dir := t.TempDir()
	req := request(url, dir, data)
	want := sum([]byte("something else"))
	req.SHA256 = strings.ToUpper(want) // accepted in either case
	_, err := Download(context.Background(), req)
	var ce *ChecksumError
	if !errors.As(err, &ce) || !errors.Is(err, ErrChecksum) {
		t.Fatalf("wrong hash: %v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, sum(data)) || !strings.Contains(msg, want) {
		t.Errorf("error lacks both sums: %v", err)
	}
	assertNothing(t, dir)

	// Replacing an installed file with a wrong download keeps the old one.
	if err := os.WriteFile(filepath.Join(dir, "tiny.gguf"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	req.Replace = true
	if _, err := Download(context.Background(), req); !errors.Is(err, ErrChecksum) {
		t.Fatalf("wrong hash, replacing: %v", err)
	}
	assertInstalled(t, dir, data)
}

func TestDownloadHTTPErrors(t *testing.T) {
	data := tinyGGUF(t)
	fs, url := serve(t, data)
	dir := t.TempDir()
	for _, status := range []int{http.StatusNotFound, http.StatusServiceUnavailable} {
		fs.status = status
		_, err := Download(context.Background(), request(url, dir, data))
		var he *HTTPError
		if !errors.As(err, &he) || he.StatusCode != status || !strings.Contains(err.Error(), strconv.Itoa(status)) {
			t.Errorf("status %d: %v", status, err)
		}
		assertNothing(t, dir)
	}

	// A 5xx on resume keeps the .part for the next try.
	fs.status = 0
	fs.cutAfter = 500
	if _, err := Download(context.Background(), request(url, dir, data)); err == nil {
		t.Fatal("no error for a dropped connection")
	}
	fs.status = http.StatusBadGateway
	if _, err := Download(context.Background(), request(url, dir, data)); !errors.As(err, new(*HTTPError)) {
		t.Fatalf("502 on resume: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "tiny.gguf.part")); err != nil || st.Size() != 500 {
		t.Fatalf(".part after a 502: %v %v", st, err)
	}
	fs.status = 0
	if _, err := Download(context.Background(), request(url, dir, data)); err != nil {
		t.Fatal(err)
	}
	assertInstalled(t, dir, data)
}

func TestDownloadRefusesNonGGUF(t *testing.T) {
	page := []byte("<html><body>Sign in to download this model</body></html>\n")
	_, url := serve(t, page)
	dir := t.TempDir()
	// Without a sum (a URL pull): size and sum cannot catch it, the header check does.
	_, err := Download(context.Background(), Request{URL: url, Dir: dir, File: "tiny.gguf"})
	if !errors.Is(err, ErrNotGGUF) {
		t.Fatalf("HTML page: %v, want ErrNotGGUF", err)
	}
	assertNothing(t, dir)
}

func TestDownloadSizeMismatch(t *testing.T) {
	data := tinyGGUF(t)
	_, url := serve(t, data)
	dir := t.TempDir()
	req := request(url, dir, data)
	req.Size++
	if _, err := Download(context.Background(), req); !errors.Is(err, ErrSize) {
		t.Fatalf("wrong size: %v, want ErrSize", err)
	}
	assertNothing(t, dir)
}

func TestDownloadStalledServerTimesOut(t *testing.T) {
	data := tinyGGUF(t)
	fs, url := serve(t, data)
	fs.stallAfter = 1000
	dir := t.TempDir()
	req := request(url, dir, data)
	req.IdleTimeout = 200 * time.Millisecond
	start := time.Now()
	_, err := Download(context.Background(), req)
	if !errors.Is(err, ErrStalled) || !errors.As(err, new(*InterruptedError)) {
		t.Fatalf("stalled server: %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("gave up after %s", el)
	}
	if st, err := os.Stat(filepath.Join(dir, "tiny.gguf.part")); err != nil || st.Size() != 1000 {
		t.Fatalf(".part after a stall: %v %v", st, err)
	}
	req.IdleTimeout = 5 * time.Second
	if _, err := Download(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	assertInstalled(t, dir, data)
}

func TestDownloadCanceledKeepsPart(t *testing.T) {
	data := tinyGGUF(t)
	fs, url := serve(t, data)
	fs.stallAfter = 2000
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	req := request(url, dir, data)
	req.Progress = func(done, total int64) {
		if done > 0 {
			cancel() // Ctrl-C
		}
	}
	_, err := Download(ctx, req)
	if !errors.Is(err, context.Canceled) || !errors.As(err, new(*InterruptedError)) {
		t.Fatalf("canceled: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "tiny.gguf.part")); err != nil || st.Size() != 2000 {
		t.Fatalf(".part after Ctrl-C: %v %v", st, err)
	}
	res, err := Download(context.Background(), request(url, dir, data))
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 2000 {
		t.Errorf("resumed %d", res.Resumed)
	}
	assertInstalled(t, dir, data)
}

func TestDownloadBusy(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "tiny.gguf.part"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		t.Skip("no file locks here:", err)
	}
	_, err = Download(context.Background(), Request{URL: "http://127.0.0.1:1/x", Dir: dir, File: "tiny.gguf"})
	if !errors.Is(err, ErrBusy) {
		t.Errorf("concurrent pull: %v, want ErrBusy", err)
	}
	if _, err := Remove(dir, "tiny"); !errors.Is(err, ErrBusy) {
		t.Errorf("rm during a pull: %v, want ErrBusy", err)
	}
}

func TestCheckFileName(t *testing.T) {
	for _, bad := range []string{"", ".", "..", "../x.gguf", "a/b.gguf", `a\b.gguf`, ".hidden.gguf", "x.gguf.part"} {
		if CheckFileName(bad) == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := CheckFileName("qwen2.5-0.5b-instruct-q4_k_m.gguf"); err != nil {
		t.Error(err)
	}
}

func TestParseContentRange(t *testing.T) {
	for _, c := range []struct {
		in           string
		start, total int64
		ok           bool
	}{
		{"bytes 100-199/200", 100, 200, true},
		{"bytes 0-0/*", 0, -1, true},
		{"bytes */200", 0, 0, false},
		{"items 1-2/3", 0, 0, false},
		{"", 0, 0, false},
	} {
		start, total, ok := parseContentRange(c.in)
		if ok != c.ok || (ok && (start != c.start || total != c.total)) {
			t.Errorf("%q: %d %d %v", c.in, start, total, ok)
		}
	}
}

func TestListResolveRemove(t *testing.T) {
	data := tinyGGUF(t)
	dir := t.TempDir()
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tiny.gguf", data)
	write("broken.gguf", []byte("GGUF but not really"))
	write("qwen2.5-0.5b-instruct-q4_k_m.gguf.part", []byte("half"))
	write("notes.txt", []byte("ignored"))
	os.Mkdir(filepath.Join(dir, "sub.gguf"), 0o755)

	list, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.File)
	}
	if got := strings.Join(names, " "); got != "broken.gguf qwen2.5-0.5b-instruct-q4_k_m.gguf.part tiny.gguf" {
		t.Fatalf("listed %q", got)
	}
	if m := list[2]; m.Err != nil || m.Architecture != "qwen2" || m.Quantization != "Q8_0" || m.Size != int64(len(data)) || m.Catalog != nil {
		t.Errorf("tiny: %+v", m)
	}
	if list[0].Err == nil || !list[1].Partial {
		t.Errorf("broken %+v, part %+v", list[0], list[1])
	}
	if l, err := List(filepath.Join(dir, "missing")); err != nil || l != nil {
		t.Errorf("missing folder: %v %v", l, err)
	}

	outside := filepath.Join(filepath.Dir(dir), "victim.gguf")
	for _, bad := range []string{"..", "../victim.gguf", outside, filepath.Join(dir, "..", "victim.gguf"), "/etc/passwd", "sub.gguf/../../victim.gguf"} {
		if _, err := Resolve(dir, bad); !errors.Is(err, ErrOutside) {
			t.Errorf("Resolve(%q): %v, want ErrOutside", bad, err)
		}
		if _, err := Remove(dir, bad); !errors.Is(err, ErrOutside) {
			t.Errorf("Remove(%q): %v, want ErrOutside", bad, err)
		}
	}
	for arg, want := range map[string]string{
		"tiny.gguf": "tiny.gguf", "tiny.gguf.part": "tiny.gguf",
		filepath.Join(dir, "tiny.gguf"):     "tiny.gguf",
		"qwen2.5-0.5b-q4_k_m":               "qwen2.5-0.5b-instruct-q4_k_m.gguf",
		"QWEN2.5-0.5B-INSTRUCT-Q4_K_M.gguf": "qwen2.5-0.5b-instruct-q4_k_m.gguf",
	} {
		got, err := Resolve(dir, arg)
		if err != nil || got != filepath.Join(dir, want) {
			t.Errorf("Resolve(%q) = %q, %v; want %s", arg, got, err, want)
		}
	}

	if _, err := Remove(dir, "sub.gguf"); err == nil {
		t.Error("removed a folder")
	}
	removed, err := Remove(dir, "tiny") // .gguf left off
	if err != nil || len(removed) != 1 || removed[0] != filepath.Join(dir, "tiny.gguf") {
		t.Errorf("rm tiny: %q %v", removed, err)
	}
	removed, err = Remove(dir, "qwen2.5-0.5b-q4_k_m") // only a stale .part
	if err != nil || len(removed) != 1 || !strings.HasSuffix(removed[0], ".part") {
		t.Errorf("rm of a partial download: %q %v", removed, err)
	}
	if _, err := Remove(dir, "tiny"); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("rm again: %v, want ErrNotInstalled", err)
	}
}

func TestCatalog(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range Catalog() {
		if seen[e.Name] || seen[e.File] {
			t.Errorf("%s: duplicate", e.Name)
		}
		seen[e.Name], seen[e.File] = true, true
		if _, err := ParseSHA256(e.SHA256); err != nil || e.SHA256 != strings.ToLower(e.SHA256) {
			t.Errorf("%s: sha256 %q", e.Name, e.SHA256)
		}
		if e.Size < 100<<20 || e.Size > 4<<30 {
			t.Errorf("%s: size %d", e.Name, e.Size)
		}
		repo := "https://huggingface.co/Qwen/" + e.Model + "-GGUF/resolve/main/"
		if e.URL != repo+e.File || CheckFileName(e.File) != nil {
			t.Errorf("%s: URL %s, file %s", e.Name, e.URL, e.File)
		}
		if !strings.Contains(e.File, strings.ToLower(e.Quant)) {
			t.Errorf("%s: file %s is not %s", e.Name, e.File, e.Quant)
		}
		if got, ok := Lookup(e.Name); !ok || got != e {
			t.Errorf("Lookup(%s)", e.Name)
		}
		if got, ok := LookupURL(e.URL); !ok || got != e {
			t.Errorf("LookupURL(%s)", e.URL)
		}
		if _, ok := Match(e.File, e.Size); !ok {
			t.Errorf("Match(%s)", e.File)
		}
		if _, ok := Match(e.File, e.Size-1); ok {
			t.Errorf("Match(%s) with another size", e.File)
		}
	}
	if len(Names()) != 6 {
		t.Errorf("catalog: %q", Names())
	}
}

func TestProgressLines(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, "tiny.gguf", false)
	now := time.Unix(0, 0)
	p.now = func() time.Time { return now }
	for done := int64(0); done <= 1000; done += 50 {
		p.Update(done, 1000)
		now = now.Add(100 * time.Millisecond)
	}
	p.Finish()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 11 || !strings.HasPrefix(lines[0], "tiny.gguf    0%") || !strings.Contains(lines[10], "100%  1000 B / 1000 B") {
		t.Errorf("progress lines:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "\r") {
		t.Error("carriage returns in non-terminal output")
	}

	buf.Reset()
	p = NewProgress(&buf, "x", true)
	p.Update(10, 100)
	p.Update(100, 100)
	p.Finish()
	if got := buf.String(); !strings.HasPrefix(got, "\r\x1b[Kx   10%") || !strings.HasSuffix(got, "100%  100 B / 100 B\n") {
		t.Errorf("terminal output %q", got)
	}
}

// A Hugging Face resolve URL answers 302 to a CDN (relative or absolute Location):
// the download follows, a resume keeps its Range along the way, and a loop ends.
func TestDownloadFollowsRedirects(t *testing.T) {
	data := tinyGGUF(t)
	fs, cdnURL := serve(t, data)
	var hops sync.Mutex
	var seen []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("Range"))
		hops.Unlock()
		switch r.URL.Path {
		case "/repo/resolve/main/tiny.gguf":
			http.Redirect(w, r, "../cas/tiny.gguf", http.StatusFound) // relative
		case "/repo/resolve/cas/tiny.gguf":
			http.Redirect(w, r, cdnURL, http.StatusTemporaryRedirect) // absolute, another server
		default:
			http.Redirect(w, r, r.URL.Path, http.StatusFound) // a loop
		}
	}))
	t.Cleanup(origin.Close)
	dir := t.TempDir()
	url := origin.URL + "/repo/resolve/main/tiny.gguf"

	fs.cutAfter = 1000
	if _, err := Download(context.Background(), request(url, dir, data)); !errors.As(err, new(*InterruptedError)) {
		t.Fatalf("dropped connection: %v", err)
	}
	res, err := Download(context.Background(), request(url, dir, data))
	if err != nil {
		t.Fatal(err)
	}
	if res.Resumed != 1000 {
		t.Errorf("resumed %d bytes, want 1000", res.Resumed)
	}
	assertInstalled(t, dir, data)
	if r := fs.seen(); len(r) != 2 || r[0] != "" || r[1] != "bytes=1000-" {
		t.Errorf("the CDN saw Range headers %q", r)
	}
	hops.Lock()
	if want := "[/repo/resolve/main/tiny.gguf  /repo/resolve/cas/tiny.gguf  /repo/resolve/main/tiny.gguf bytes=1000- /repo/resolve/cas/tiny.gguf bytes=1000-]"; fmt.Sprint(seen) != want {
		t.Errorf("the origin saw %q", seen)
	}
	hops.Unlock()

	_, err = Download(context.Background(), Request{URL: origin.URL + "/loop.gguf", Dir: t.TempDir(), File: "loop.gguf"})
	if err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("redirect loop: %v", err)
	}
}

// Issue 11 item 2: a download URL's query (a signed or private URL's token) is
// a secret: the error neither quotes it nor keeps a prefix of it that the
// server echoed into a reason phrase cut short.
func TestDownloadErrorsHideTheURLToken(t *testing.T) {
	const token = "hf_abcdefghijklmnopqrstuvwxyz0123"
	s := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		s.Next(br)
		io.WriteString(c, "HTTP/1.1 403 bad token "+strings.Repeat("x", 40)+token+"\r\nContent-Length: 0\r\n\r\n")
	})
	_, err := Download(context.Background(), Request{URL: s.URL() + "/m.gguf?token=" + token, Dir: t.TempDir(), File: "m.gguf", IdleTimeout: 5 * time.Second})
	if !errors.As(err, new(*HTTPError)) || strings.Contains(err.Error(), token[:8]) || !strings.Contains(err.Error(), "403") {
		t.Fatalf("error %v", err)
	}
}

// A server that takes the request and never answers: the idle timeout covers
// the wait for the reply's header too.
func TestDownloadNoReplyTimesOut(t *testing.T) {
	s := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		s.Next(br)
		io.Copy(io.Discard, c) // until the client gives up
	})
	dir := t.TempDir()
	_, err := Download(context.Background(), Request{URL: s.URL() + "/m.gguf", Dir: dir, File: "m.gguf", IdleTimeout: 100 * time.Millisecond})
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "no data received for 100ms") {
		t.Fatalf("err = %v", err)
	}
	assertNothing(t, dir)
}
