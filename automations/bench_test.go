package automations

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// memKV is a KV in memory, to measure the scheduler without the store's fsync.
type memKV struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (k *memKV) Put(b, key string, v []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.m[b+"/"+key] = append([]byte(nil), v...)
	return nil
}
func (k *memKV) Get(b, key string) ([]byte, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[b+"/"+key]
	return v, ok, nil
}
func (k *memKV) Delete(b, key string) error {
	k.mu.Lock()
	delete(k.m, b+"/"+key)
	k.mu.Unlock()
	return nil
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// mixed returns n automations of the kinds a house has: daily and hourly cron
// jobs, intervals of hours, sunsets.
func mixed(n int) []Spec {
	specs := make([]Spec, n)
	for i := range specs {
		sp := Spec{Name: fmt.Sprintf("a%d", i), Notify: "{name}"}
		switch i % 4 {
		case 0:
			sp.Cron = fmt.Sprintf("%d %d * * *", i%60, (i/60)%24)
		case 1:
			sp.Cron = fmt.Sprintf("%d * * * mon-fri", i%60)
		case 2:
			sp.Every = time.Duration(1+i%12) * time.Hour
		case 3:
			sp.Sun, sp.Offset = Sunset, time.Duration(i%30)*time.Minute
		}
		specs[i] = sp
	}
	return specs
}

// BenchmarkRunOverhead is the scheduler's own cost of one run of an automation
// whose action is a no-op command: due-time bookkeeping, the run record written
// before and after, the call path (validate, audit intent and outcome). With
// the real store (bbolt, an fsync per write) and with an in-memory one.
func BenchmarkRunOverhead(b *testing.B) {
	for _, name := range []string{"memory", "bbolt"} {
		b.Run(name, func(b *testing.B) {
			var kv KV = &memKV{m: map[string][]byte{}}
			var audit tools.Auditor = nopAudit{}
			if name == "bbolt" {
				st, err := store.Open(b.TempDir(), store.Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer st.Close()
				kv, audit = st, st
			}
			reg := tools.NewRegistry()
			reg.Register(&hitTool{})
			clock := &fakeClock{now: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
			s, err := New([]Spec{{Name: "x", Every: time.Second, Do: hit("x")}}, Options{Store: kv, Clock: clock, Log: quiet(),
				Effects: Effects{Runner: &tools.Runner{Registry: reg, Audit: audit}}})
			if err != nil {
				b.Fatal(err)
			}
			s.Start(context.Background())
			now := clock.now
			s.step(now)
			b.ResetTimer()
			for range b.N {
				now = now.Add(time.Second)
				clock.set(now)
				s.step(now)
				s.Wait()
			}
		})
	}
}

type nopAudit struct{}

func (nopAudit) Intent(string, string, string) (uint64, error) { return 1, nil }
func (nopAudit) Outcome(uint64, bool, string) error            { return nil }

// BenchmarkIdleWakeups drives the loop of an idle daemon with 100 automations
// (cron daily and hourly, intervals of hours, sunsets) through a simulated week
// exactly as Run does (step, then sleep for what it returns) and reports how
// often it wakes per day, against how many runs were due.
func BenchmarkIdleWakeups(b *testing.B) {
	for range b.N {
		clock := &fakeClock{now: time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)}
		s, err := New(mixed(100), Options{Store: &memKV{m: map[string][]byte{}}, Clock: clock, Log: quiet(),
			HasLocation: true, Lat: 52.52, Lon: 13.40})
		if err != nil {
			b.Fatal(err)
		}
		s.Start(context.Background())
		end := clock.now.Add(7 * 24 * time.Hour)
		wakes, runs, idle := 0, 0, 0
		for now := clock.now; now.Before(end); {
			clock.set(now)
			before := s.started
			wait := s.step(now)
			s.Wait()
			wakes++
			runs += s.started - before
			if s.started == before {
				idle++
			}
			now = now.Add(max(wait, time.Nanosecond))
		}
		b.ReportMetric(float64(wakes)/7, "wakeups/day")
		b.ReportMetric(float64(runs)/7, "runs/day")
		b.ReportMetric(float64(idle)/7, "idle-wakeups/day")
	}
}

// BenchmarkMemory1000 reports the heap the scheduler holds for 1,000
// automations (specs, parsed cron schedules, state), per automation.
func BenchmarkMemory1000(b *testing.B) {
	for range b.N {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		clock := &fakeClock{now: time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)}
		s, err := New(mixed(1000), Options{Store: &memKV{m: map[string][]byte{}}, Clock: clock, Log: quiet(),
			HasLocation: true, Lat: 52.52, Lon: 13.40})
		if err != nil {
			b.Fatal(err)
		}
		s.Start(context.Background())
		s.step(clock.now)
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/1000, "heap-bytes/automation")
		runtime.KeepAlive(s)
	}
}
