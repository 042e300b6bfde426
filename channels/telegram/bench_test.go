package telegram

import (
	"context"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
)

// BenchmarkReplyLatency measures, per message, the time from the fake Bot API serving
// the update (getUpdates returns it) to the reply's sendMessage arriving at it: the
// inbox commit with the offset, the worker, access checks, the dispatcher, the reply's
// formatting and the HTTP call. "command" runs @gpio/write on the simulated board (two
// audit commits and the item's start and done); "agent" is free text answered by a
// scripted instant provider. The store is on disk (the test's temp dir) or tmpfs.
// It reports p50 and p95 per message.
func BenchmarkReplyLatency(b *testing.B) {
	dirs := map[string]string{"disk": b.TempDir()}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if shm, err := os.MkdirTemp("/dev/shm", "clawedge-bench"); err == nil {
			defer os.RemoveAll(shm)
			dirs["tmpfs"] = shm
		}
	}
	for _, path := range []string{"command", "agent"} {
		for _, name := range []string{"disk", "tmpfs"} {
			dir, ok := dirs[name]
			if !ok {
				continue
			}
			b.Run(path+"/store="+name, func(b *testing.B) { benchLatency(b, dir, path == "agent") })
		}
	}
}

func benchLatency(b *testing.B, dir string, agent bool) {
	srv := telegramtest.New(b)
	srv.KeepCalls = false
	replies := make(chan time.Time, 16)
	srv.OnCall = func(c telegramtest.Call) {
		if c.Method == "sendMessage" {
			replies <- c.At
		}
	}
	sub, err := os.MkdirTemp(dir, "run")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(sub)
	h := newHarness(b, srv, sub)
	var opts []option
	if agent {
		opts = append(opts, withAgent(agentFunc(func(ctx context.Context, m channels.Message) (string, error) {
			return "Done: the lights are on.", nil
		})))
	}
	cfg := h.config(opts...)
	cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	h.start(cfg)
	text := []string{`@gpio/write{pin="led";value=1}`, `@gpio/write{pin="led";value=0}`}
	if agent {
		text = []string{"turn the lights on", "and off again"}
	}
	// Warm up: connections, the first commit.
	srv.Text(owner, nil, text[0])
	<-replies
	backToBack := os.Getenv("CLAWEDGE_BENCH_BACK_TO_BACK") == "1"
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		id := srv.Text(owner, nil, text[i%2])
		at := <-replies
		lat = append(lat, at.Sub(srv.ServedAt(id)))
		if !backToBack {
			// Messages from people come seconds apart: let the item's done commit
			// finish before the next one, or it would queue behind it (that case is
			// CLAWEDGE_BENCH_BACK_TO_BACK=1).
			for {
				if items, _ := h.st.QueueItems(QueueName, 1); len(items) == 0 {
					break
				}
				time.Sleep(50 * time.Microsecond)
			}
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
}
