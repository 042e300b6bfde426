package web

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/channels"
)

// BenchmarkPageLoad is a paired browser's load of each page over loopback:
// the request through every guard, the facts read (the board's pins, the
// models, doctor's findings as the daemon keeps them), the page written
// (docs/BENCHMARKS.md; the budget is 50 ms on the board).
func BenchmarkPageLoad(b *testing.B) {
	d := newDash(b, nil)
	d.findings = []Finding{{What: "disk", Status: "warn", Info: "88% used", Fix: "remove a model"}, {What: "clock", Status: "ok", Info: "synchronized"}}
	d.models = []Model{{Name: "local", Model: "qwen2.5-1.5b.gguf", Where: "on the board", Route: "answers", Calls: 3, LastSpeed: "6.1 tokens/s"}}
	br := d.pair("phone", Operator)
	for _, page := range []string{"/", "/pins", "/chat", "/models", "/audit"} {
		name := strings.TrimPrefix(page, "/")
		if name == "" {
			name = "overview"
		}
		b.Run(name, func(b *testing.B) {
			req, _ := http.NewRequest("GET", d.http.URL+page, nil)
			req.AddCookie(&http.Cookie{Name: cookieName, Value: br.cookie})
			b.ReportAllocs()
			for b.Loop() {
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Fatal(resp.Status)
				}
			}
		})
	}
	d.http.Close()
}

// BenchmarkIdleRSS reports how much the process's resident memory grows
// when the dashboard is started on a real listener and has served one page
// (the budget: 1 MB).
func BenchmarkIdleRSS(b *testing.B) {
	d := newDash(b, nil)
	d.http.Close()
	for b.Loop() {
		before := rss(b)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- d.srv.Serve(ctx, ln, nil) }()
		resp, err := http.Get("http://" + ln.Addr().String() + "/pair")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		after := rss(b)
		cancel()
		<-done
		b.ReportMetric(float64(after-before)/1024, "KB-rss-growth")
	}
}

// rss is the resident set after a collection that returns freed memory.
func rss(b *testing.B) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	raw, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		b.Skip("no /proc/self/statm")
	}
	f := strings.Fields(string(raw))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// BenchmarkChatFirstPiece is the time from a chat's POST to its first
// streamed piece on loopback, the model an in-process script (no wire
// format, no model time): the door's own cost of streaming an answer,
// through the guards, the Dispatcher and the agent loop.
func BenchmarkChatFirstPiece(b *testing.B) {
	d := newDash(b, nil)
	script := agenttest.New()
	script.Last, script.Forget = &agenttest.Step{Text: "The led is off and the button is up.", Chunk: 8}, true
	ag, err := agent.New(agent.Options{Provider: script, Runner: d.srv.Runner, Policy: d.auth.Policy, Approvals: d.auth.Approvals})
	if err != nil {
		b.Fatal(err)
	}
	d.srv.Chat = &channels.Dispatcher{Runner: d.srv.Runner, Approvals: d.auth, Agent: turnAgent{ag}}
	br := d.pair("phone", Operator)
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest("POST", d.http.URL+"/api/chat", strings.NewReader(`{"text":"how is the board?"}`))
		req.AddCookie(&http.Cookie{Name: cookieName, Value: br.cookie})
		req.Header.Set(csrfHeader, br.csrf)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		if err != nil || line != "event: text\n" {
			b.Fatalf("first line %q (%v)", line, err)
		}
		b.StopTimer()
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		b.StartTimer()
	}
}
