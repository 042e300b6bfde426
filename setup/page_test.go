package setup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/tools"
)

// smallGGUF is a valid GGUF file of a few KB.
func smallGGUF(t *testing.T) []byte {
	t.Helper()
	kv := []gguf.KV{{Key: "general.architecture", Value: gguf.String("qwen2")}}
	tensors := []gguf.TensorInfo{{Name: "token_embd.weight", Dims: []uint64{64, 64}, Type: gguf.Q8_0}}
	var buf bytes.Buffer
	w, err := gguf.NewWriter(&buf, kv, tensors)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(make([]byte, tensors[0].Bytes()))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func call(t *testing.T, reg *tools.Registry, name string, args any) (tools.Result, error) {
	t.Helper()
	tool, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	a, err := tool.Spec().ValidateJSON(raw)
	if err != nil {
		return tools.Result{}, err
	}
	return tool.Run(context.Background(), a)
}

// setup/pull downloads a catalog model that fits, verified, in the
// background, its progress in the page's view; one that does not fit this
// board's memory is refused; the downloaded one is then offered as such,
// and setup/write takes it.
func TestPullFromThePage(t *testing.T) {
	model := smallGGUF(t)
	sum := sha256.Sum256(model)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "m.gguf", time.Time{}, bytes.NewReader(model))
	}))
	defer srv.Close()
	dir := t.TempDir()
	meminfo := filepath.Join(dir, "meminfo")
	os.WriteFile(meminfo, []byte("MemTotal: 1000000 kB\nMemAvailable: 500000 kB\n"), 0o644)
	cat := []modelfiles.Entry{
		{Name: "small", Model: "Small", Quant: "Q8_0", File: "small.gguf", URL: srv.URL + "/small.gguf", Size: int64(len(model)), SHA256: hex.EncodeToString(sum[:])},
		{Name: "huge", Model: "Huge", Quant: "F16", File: "huge.gguf", URL: srv.URL + "/huge.gguf", Size: 4 << 30, SHA256: strings.Repeat("0", 64)},
	}
	p := &Page{Path: filepath.Join(dir, "clawedge.yaml"), DataDir: filepath.Join(dir, "data"), Held: &Held{}, Meminfo: meminfo,
		Catalog: func() []modelfiles.Entry { return cat }}
	reg := tools.NewRegistry()
	if err := RegisterTools(reg, p); err != nil {
		t.Fatal(err)
	}
	if v := (Facts{P: p}).Setup(); len(v.Models) != 1 || v.Models[0].Name != "small" || v.Models[0].Installed {
		t.Fatalf("offered: %+v", v.Models)
	}
	if _, err := call(t, reg, "setup/pull", map[string]any{"name": "huge"}); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a model that does not fit: %v", err)
	}
	if _, err := call(t, reg, "setup/pull", map[string]any{"name": "small"}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		v := (Facts{P: p}).Setup()
		if v.Pull == nil {
			t.Fatal("no download in the view")
		}
		if v.Pull.Error != "" {
			t.Fatalf("the download: %s", v.Pull.Error)
		}
		if v.Pull.Finished {
			if v.Pull.Done != int64(len(model)) || !v.Models[0].Installed {
				t.Fatalf("finished: %+v %+v", v.Pull, v.Models)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not finished: %+v", v.Pull)
		}
	}
	p.Devices = func() map[string][]string { return map[string][]string{} }
	if _, err := call(t, reg, "setup/write", map[string]any{"driver": "periph", "pins": "led=17:out", "telegram": "none", "remote": "none"}); err == nil || !strings.Contains(err.Error(), "no /dev/gpiochip") {
		t.Errorf("periph on a board without GPIO: %v", err)
	}
	if _, err := os.Stat(p.Path); err == nil {
		t.Fatal("a refused write wrote the config")
	}
	if _, err := call(t, reg, "setup/write", map[string]any{"driver": "sim", "pins": "led=17:out", "telegram": "none", "local": "small", "remote": "none"}); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(p.Path)
	if !strings.Contains(string(written), filepath.Join(p.DataDir, "models", "small.gguf")) {
		t.Errorf("the config does not name the model:\n%s", written)
	}
}
