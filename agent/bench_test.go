package agent

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
)

// BenchmarkTurn is the agent's own cost of a turn that calls gpio/write on the
// simulated board and then answers: two model steps (scripted: no model time), the
// prompt built and fitted twice, the call parsed, validated, audited and run, every
// transition and both step records committed to the store. The store's commits are
// fsyncs, so the figure depends on the disk; the no-store variant is the CPU cost.
func BenchmarkTurn(b *testing.B) {
	for _, withStore := range []bool{true, false} {
		name := "store"
		if !withStore {
			name = "nostore"
		}
		b.Run(name, func(b *testing.B) {
			e := newEnv(b, Options{})
			if !withStore {
				opt := e.opt
				opt.Store = nil
				r := *opt.Runner
				r.Audit = &memAudit{}
				opt.Runner = &r
				e.ag, _ = New(opt)
			}
			e.p.Forget = true
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				e.p.Add(agenttest.Step{Text: qwenCall("gpio/write", fmt.Sprintf(`{"pin": "led", "value": %d}`, i%2))},
					agenttest.Step{Text: "Done."})
				// One session per iteration would measure loading; one long session would
				// measure history growth. The history is bounded, so one session is the
				// steady state of a chat.
				out, err := e.ag.Turn(context.Background(), In{Channel: console, User: user, Text: "toggle the led"})
				if err != nil || out.Stop != "answered" {
					b.Fatal(out, err)
				}
			}
		})
	}
}

// BenchmarkIdleSession measures the memory an idle session holds: sessions that have
// had one short turn (a call and an answer), kept in memory by the agent.
func BenchmarkIdleSession(b *testing.B) {
	const n = 500
	for range b.N {
		b.StopTimer()
		e := newEnv(b, Options{})
		opt := e.opt
		opt.Store = nil // the store's pages are not the session's memory
		r := *opt.Runner
		r.Audit = &memAudit{}
		opt.Runner = &r
		e.p.Forget = true
		ag, _ := New(opt)
		for range n {
			e.p.Add(agenttest.Step{Text: qwenCall("gpio/read", `{"pin": "led"}`)}, agenttest.Step{Text: "The led is off."})
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		for i := range n {
			if _, err := ag.Turn(context.Background(), In{Channel: "telegram", User: fmt.Sprintf("telegram:%d", i), Text: "is the led on?"}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/session")
		runtime.KeepAlive(ag)
		b.StartTimer()
	}
}

// memAudit is an auditor in memory, for the CPU-only figure.
type memAudit struct{ n uint64 }

func (m *memAudit) Intent(who, channel, command string) (uint64, error) { m.n++; return m.n, nil }
func (m *memAudit) Outcome(id uint64, ok bool, detail string) error     { return nil }
