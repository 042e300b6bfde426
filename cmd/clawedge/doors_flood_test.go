package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/procfs"
)

// raiseNoFile raises this process's soft limit of open descriptors to at
// least n (within the hard limit), and skips the test when the hard limit is
// lower. The old limit is restored when the test ends.
func raiseNoFile(tb testing.TB, n uint64) {
	tb.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Fatal(err)
	}
	if lim.Cur >= n {
		return
	}
	if lim.Max < n {
		tb.Skipf("the hard limit of open files is %d; this test needs %d", lim.Max, n)
	}
	old := lim
	lim.Cur = n
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		tb.Skipf("cannot raise the limit of open files to %d: %v", n, err)
	}
	tb.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old) })
}

// flood opens n connections to addr (127.0.0.1 only), concurrently, each
// sending a request line and never the rest (half of them) or nothing (the
// other half), and returns them open. The caller closes them.
func flood(tb testing.TB, addr string, n int) []net.Conn {
	tb.Helper()
	if h, _, _ := net.SplitHostPort(addr); h != "127.0.0.1" {
		tb.Fatalf("flood %s: only 127.0.0.1", addr)
	}
	var mu sync.Mutex
	var conns []net.Conn
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			// Past the kernel's backlog (net.core.somaxconn) of a server
			// that accepts no more, a connection is not made: not counted.
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				return
			}
			if i%2 == 0 {
				c.SetWriteDeadline(time.Now().Add(time.Second))
				io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n")
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		})
	}
	wg.Wait()
	return conns
}

// TestDoorsBoundedUnderFlood runs the daemon in-process with its metrics
// endpoint on 127.0.0.1, opens 3,000 connections to it that never finish a
// request, and checks, while they are held, that the daemon did not take a
// goroutine per connection and that a command on the control socket answers
// within 2 s; after they are closed, the endpoint serves a scrape again.
func TestDoorsBoundedUnderFlood(t *testing.T) {
	const n = 3000
	raiseNoFile(t, 2*n+1024)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfgPath, dataDir := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nmetrics: {listen: %q}\n", addr))
	runInProcess(t, cfgPath, "error")
	scrape := func(within time.Duration) (string, error) {
		deadline := time.Now().Add(within)
		cl := &http.Client{Timeout: within}
		for {
			resp, err := cl.Get("http://" + addr + "/metrics")
			if err == nil {
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 && rerr == nil {
					return string(body), nil
				}
				err = fmt.Errorf("status %d, %v", resp.StatusCode, rerr)
			}
			if time.Now().After(deadline) {
				return "", err
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if _, err := scrape(10 * time.Second); err != nil {
		t.Fatalf("no metrics endpoint: %v", err)
	}
	ctl, err := channels.DialControl(filepath.Join(dataDir, channels.ControlSocketName), "test")
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	before := runtime.NumGoroutine()

	conns := flood(t, addr, n)
	closeAll := sync.OnceFunc(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	defer closeAll()
	if len(conns) < n/2 {
		t.Fatalf("only %d of %d connections were made", len(conns), n)
	}
	time.Sleep(200 * time.Millisecond) // the server accepts what it will
	// The endpoint serves daemon.MetricsMaxConns connections (two goroutines each
	// at most: the connection's and its background read); the rest wait in
	// the kernel. Before the cap, every connection had its goroutine.
	// Counted by what they run, not all the process's: the other tests
	// running beside this one have goroutines of their own.
	if g := servingConns(); g > 2*daemon.MetricsMaxConns+50 {
		t.Errorf("%d connections served while %d are held: the endpoint serves them all", g, len(conns))
	}
	start := time.Now()
	r, err := ctl.Send(`@gpio/read{pin="led"}`)
	if took := time.Since(start); err != nil || r.Failed || took > 2*time.Second {
		t.Errorf("gpio/read on the control socket while %d connections are held: %+v, %v after %v", len(conns), r, err, took)
	}
	if fds, err := procfs.OpenFDs(); err == nil {
		t.Logf("%d connections held, %d open descriptors in this process (both ends), %d goroutines (%d before), %d serving HTTP connections", len(conns), fds, runtime.NumGoroutine(), before, servingConns())
	}

	closeAll()
	page, err := scrape(15 * time.Second)
	if err != nil {
		t.Fatalf("no scrape after the connections were closed: %v", err)
	}
	if !strings.Contains(page, "process_open_fds ") {
		t.Errorf("no process_open_fds in the page:\n%s", page)
	}
}

// BenchmarkMetricsFloodRSS starts the daemon binary with its metrics
// endpoint on 127.0.0.1, opens CLAWEDGE_FLOOD_CONNS connections to it
// (default 12,000) that never finish a request, and reports the daemon's
// resident memory while they are held (rss-KiB), its peak (hwm-KiB) and how
// long a gpio/read on its control socket took meanwhile (read-ms).
//
//	go test ./cmd/clawedge -run '^$' -bench MetricsFloodRSS -benchtime 1x
//
// CLAWEDGE_FLOOD_BIN runs another build of the daemon (an older commit's,
// for a figure before a change).
func BenchmarkMetricsFloodRSS(b *testing.B) {
	n := 12000
	if s := os.Getenv("CLAWEDGE_FLOOD_CONNS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	raiseNoFile(b, uint64(n)+1024)
	for b.Loop() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		dataDir := filepath.Join(b.TempDir(), "data")
		cfgPath := filepath.Join(filepath.Dir(dataDir), "clawedge.yaml")
		if err := os.WriteFile(cfgPath, fmt.Appendf(nil, "data_dir: %s\nconsole: {stdin: false}\nmetrics: {listen: %q}\n", dataDir, addr), 0o600); err != nil {
			b.Fatal(err)
		}
		d := exec.Command(cmp.Or(os.Getenv("CLAWEDGE_FLOOD_BIN"), binPath), "run", "--config", cfgPath, "--log-level", "error")
		// The daemon gets the same limit of open files as this process.
		if err := d.Start(); err != nil {
			b.Fatal(err)
		}
		stop := func() { d.Process.Signal(syscall.SIGTERM); d.Wait() }
		sock := filepath.Join(dataDir, channels.ControlSocketName)
		var ctl *channels.ControlClient
		for deadline := time.Now().Add(30 * time.Second); ctl == nil; {
			if ctl, err = channels.DialControl(sock, "bench"); err != nil && time.Now().After(deadline) {
				stop()
				b.Fatalf("no daemon: %v", err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		conns := flood(b, addr, n)
		time.Sleep(time.Second)
		start := time.Now()
		_, err = ctl.Send(`@gpio/read{pin="led"}`)
		read := time.Since(start)
		if err != nil {
			b.Errorf("gpio/read: %v", err)
		}
		st := daemonStatus(b, d.Process.Pid)
		b.ReportMetric(float64(st["VmRSS"].N>>10), "rss-KiB")
		b.ReportMetric(float64(st["VmHWM"].N>>10), "hwm-KiB")
		b.ReportMetric(float64(read.Milliseconds()), "read-ms")
		b.ReportMetric(float64(len(conns)), "conns")
		for _, c := range conns {
			c.Close()
		}
		ctl.Close()
		stop()
	}
}

func daemonStatus(tb testing.TB, pid int) map[string]procfs.Field {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var sb strings.Builder
	s := bufio.NewScanner(f)
	for s.Scan() {
		sb.WriteString(s.Text() + "\n")
	}
	return procfs.Parse(sb.String())
}

// servingConns is how many goroutines of this process serve an HTTP
// connection (net/http's conn.serve).
func servingConns() int {
	var b strings.Builder
	pprof.Lookup("goroutine").WriteTo(&b, 2)
	n := 0
	for _, g := range strings.Split(b.String(), "\n\n") {
		if strings.Contains(g, "net/http.(*conn).serve") {
			n++
		}
	}
	return n
}
