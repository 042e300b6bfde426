//go:build llamacpp

package agent

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/chat"
	"github.com/clawedge/clawedge/localmodel/llama"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/tools/sys"
)

// The local tier's whole system turn (the prompt, 10 tools, Qwen2.5's tool
// instructions) measured with the real Qwen tokenizer: at most 1,500 tokens, and
// the agent's estimate never below the real count.
//
//	go test -tags llamacpp -run TestLocalPromptRealTokens -v ./agent/
func TestLocalPromptRealTokens(t *testing.T) {
	arch := map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
	root := filepath.Join("..", "third_party", "llama")
	vocab := filepath.Join(root, "models", "ggml-vocab-qwen2.gguf")
	if _, err := os.Stat(vocab); err != nil {
		t.Skipf("%v: run scripts/fetch-llama.sh first", err)
	}
	llama.Init(filepath.Join(root, arch, "lib"), false)
	m, err := llama.LoadModel(vocab, llama.LoadOptions{VocabOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	// A full board: pins, a serial port and an I2C bus, so every namespace has tools.
	b, err := hal.Open(sim.New(), hal.Config{
		Pins: []hal.PinConfig{
			{Name: "led", GPIO: 17, Mode: hal.ModeOut}, {Name: "relay", GPIO: 22, Mode: hal.ModeOut, ActiveLow: true},
			{Name: "heater", GPIO: 23, Mode: hal.ModeOut}, {Name: "fan", GPIO: 24, Mode: hal.ModeOut},
			{Name: "button", GPIO: 27, Mode: hal.ModeIn, Edge: hal.EdgeBoth}, {Name: "door", GPIO: 5, Mode: hal.ModeIn, Edge: hal.EdgeBoth},
		},
		Ports: []hal.PortConfig{{Name: "arduino", Device: "/dev/ttyUSB0", Baud: 115200}},
		Buses: []hal.BusConfig{{Name: "sensors", Bus: "1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reg := tools.NewRegistry()
	if err := peripherals.Register(reg, b); err != nil {
		t.Fatal(err)
	}
	if err := sys.Register(reg, sys.Info{Version: "test"}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	p := agenttest.New(agenttest.Step{Text: "hi"})
	p.Capabilities = llm.Caps{Context: 4096, Local: true, Tools: true}
	ag, err := New(Options{Provider: p, Runner: &tools.Runner{Registry: reg, Audit: st}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"hello", "send PING to the arduino and read the sensors on i2c"} {
		ag.Turn(context.Background(), In{Channel: "console/stdin", User: "pi", Text: msg})
		reqs := p.Requests()
		req := reqs[len(reqs)-1]
		p.Add(agenttest.Step{Text: "hi"})
		if len(req.Tools) != 10 {
			t.Errorf("%q: %d tools offered, want 10 of %d", msg, len(req.Tools), len(reg.Specs()))
		}
		tmpl, _ := chat.Named("qwen2.5")
		sysReq := llm.Request{Messages: []llm.Message{req.Messages[0]}, Tools: req.Tools}
		text, err := tmpl.Render(sysReq)
		if err != nil {
			t.Fatal(err)
		}
		toks, err := m.Tokenize(text, false, true)
		if err != nil {
			t.Fatal(err)
		}
		est := EstimateTokens(sysReq.Messages, sysReq.Tools)
		if testing.Verbose() && os.Getenv("SHOW_PROMPT") != "" {
			t.Log(text)
		}
		var names []string
		for _, d := range req.Tools {
			names = append(names, d.Name)
		}
		t.Logf("%q: system turn with %d tools: %d real tokens (%d bytes), estimate %d; tools %v", msg, len(req.Tools), len(toks), len(text), est, names)
		if len(toks) > 1500 {
			t.Errorf("the local system prompt is %d tokens, want <= 1500", len(toks))
		}
		if est < len(toks) {
			t.Errorf("the estimate %d is below the real count %d", est, len(toks))
		}
	}
}
