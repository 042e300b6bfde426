package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
)

// BenchmarkConsoleLatency measures one console command from the line arriving to
// the reply being written: parse, validate, audit intent (fsynced), set the pin on
// the simulated board, audit outcome (fsynced), format the reply. It reports the
// median and p99 per command. The store lives in dataDir: the "disk" case is the
// test's temp dir, "tmpfs" (/dev/shm) shows the cost without storage latency.
func BenchmarkConsoleLatency(b *testing.B) {
	dirs := map[string]string{"disk": b.TempDir()}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		shm, err := os.MkdirTemp("/dev/shm", "clawedge-bench")
		if err == nil {
			defer os.RemoveAll(shm)
			dirs["tmpfs"] = shm
		}
	}
	for _, name := range []string{"disk", "tmpfs"} {
		dir, ok := dirs[name]
		if !ok {
			continue
		}
		b.Run("store="+name, func(b *testing.B) { benchConsole(b, dir) })
	}
}

func benchConsole(b *testing.B, dataDir string) {
	var board *sim.Sim
	newSim = func() hal.Driver { board = sim.New(); return board }
	defer func() { newSim = func() hal.Driver { return sim.New() } }()
	cfgPath := filepath.Join(b.TempDir(), "clawedge.yaml")
	os.WriteFile(cfgPath, []byte("data_dir: "+filepath.Join(dataDir, "data")+"\n"), 0o600)
	g := &globalFlags{config: cfgPath, logLevel: "error"}
	cfg, err := loadConfig(g)
	if err != nil {
		b.Fatal(err)
	}
	a, err := daemon.Open(cfg, coreOptions(g, 0))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &channels.Console{Handler: &channels.Dispatcher{Runner: a.Runner()}, Channel: "console/bench"}
	go c.Serve(context.Background(), inR, outW)
	replies := bufio.NewReader(outR)
	lines := [2][]byte{[]byte("@gpio/write{pin=\"led\";value=0}\n"), []byte("@gpio/write{pin=\"led\";value=1}\n")}

	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		inW.Write(lines[i%2])
		reply, err := replies.ReadString('\n')
		lat = append(lat, time.Since(start))
		if err != nil || len(reply) < 5 {
			b.Fatalf("reply %q, %v", reply, err)
		}
	}
	b.StopTimer()
	if want := hal.Level((b.N-1)%2 == 1); board.Level(17) != want {
		b.Fatalf("GPIO17 = %v after the last command, want %v", board.Level(17), want)
	}
	inW.Close()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "%s: n=%d p50=%v p99=%v\n", b.Name(), len(lat), lat[len(lat)/2], lat[len(lat)*99/100])
	}
}
