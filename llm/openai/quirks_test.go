package openai_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/remote"
)

// What servers other than OpenAI's send, written out byte by byte.

func rawServer(t *testing.T, contentType, body string) *openai.Provider {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Options{Options: remote.Options{BaseURL: srv.URL + "/v1/", Model: "m", MaxRetries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestOllamaParallelCalls(t *testing.T) {
	// Ollama sends each call whole, every one at index 0, told apart by id;
	// and the reasoning of a thinking model in "reasoning", not content.
	p := rawServer(t, "text/event-stream",
		`data: {"model":"qwen3:8b","choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning":"let me think"}}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_1","index":0,"type":"function","function":{"name":"gpio__write","arguments":"{\"pin\":\"led\"}"}}]}}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_2","index":0,"type":"function","function":{"name":"sys__time","arguments":"{}"}}]}}]}`+"\n\n"+
			`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"tool_calls"}]}`+"\n\n"+
			`data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42}}`+"\n\n"+
			"data: [DONE]\n\n")
	text, f, err := llm.Collect(start(t, p))
	if err != nil || text != "" || len(f.ToolCalls) != 2 || f.Model != "qwen3:8b" || f.Usage.CompletionTokens != 30 {
		t.Fatalf("%q %+v %v", text, f, err)
	}
	if c := f.ToolCalls; c[0].ID != "call_1" || c[0].Name != "gpio/write" || string(c[0].Arguments) != `{"pin":"led"}` ||
		c[1].ID != "call_2" || c[1].Name != "sys/time" {
		t.Errorf("calls %+v", c)
	}
}

func TestLlamaServerStream(t *testing.T) {
	// llama-server: CRLF-free LF events, reasoning_content for thinking,
	// timings, and no [DONE] needed once a finish reason came.
	p := rawServer(t, "text/event-stream",
		`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"reasoning_content":"hmm"}}],"model":"qwen"}`+"\n\n"+
			`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"It is "}}]}`+"\n\n"+
			`data: {"choices":[{"finish_reason":null,"index":0,"delta":{"content":"noon."}}]}`+"\n\n"+
			`data: {"choices":[{"finish_reason":"stop","index":0,"delta":{}}],"usage":{"completion_tokens":3,"prompt_tokens":20},"timings":{"predicted_ms":12.5}}`+"\n\n")
	text, f, err := llm.Collect(start(t, p))
	if err != nil || text != "It is noon." || f.Reason != llm.ReasonStop || f.Usage.PromptTokens != 20 {
		t.Fatalf("%q %+v %v", text, f, err)
	}
}

func TestNotStreamed(t *testing.T) {
	p := rawServer(t, "application/json", `{"error":{"message":"streaming is not supported"}}`)
	_, err := p.Chat(context.Background(), llm.Request{Messages: hi})
	if err == nil || !strings.Contains(err.Error(), "answered without streaming: streaming is not supported") {
		t.Fatal(err)
	}
}

func TestCutShort(t *testing.T) {
	p := rawServer(t, "text/event-stream", `data: {"choices":[{"delta":{"content":"par"}}]}`+"\n\n"+`data: {"choices":[{"delta":{"content":"tial`)
	text, _, err := llm.Collect(start(t, p))
	if text != "par" || !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "cut short") {
		t.Fatalf("%q %v", text, err)
	}
	p = rawServer(t, "text/event-stream", `data: {"choices":[{"delta":{"content":"par"}}]}`+"\n\n")
	if _, _, err := llm.Collect(start(t, p)); !errors.Is(err, llm.ErrUnavailable) ||
		!strings.Contains(err.Error(), "ended before the reply did") {
		t.Fatal(err)
	}
	p = rawServer(t, "text/event-stream", "data: {not json\n\n")
	if _, _, err := llm.Collect(start(t, p)); !errors.Is(err, llm.ErrUnavailable) ||
		!strings.Contains(err.Error(), "not JSON") {
		t.Fatal(err)
	}
}

var hi = []llm.Message{{Role: llm.RoleUser, Content: "hi"}}

func start(t *testing.T, p llm.Provider) llm.Stream {
	t.Helper()
	s, err := p.Chat(context.Background(), llm.Request{Messages: hi})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
