package metrics

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/internal/procfs"
)

// started stands for the process's start: this package is initialised
// before main runs, and reading it from /proc/self/stat would take the
// boot time from /proc/stat as well.
var started = time.Now()

// openFDs is the open-descriptor count of the last second. Listing
// /proc/self/fd at each scrape made a scrape's cost grow with the
// connections held open (3,000 of them, each scraping, took the board's CPU
// and memory); procfs.OpenFDs asks the kernel for the count where it can,
// and this cache makes a burst of scrapes count once a second whatever the
// kernel.
var openFDs = fdCache{ttl: time.Second, count: procfs.OpenFDs}

// fdCache keeps a count for ttl.
type fdCache struct {
	ttl   time.Duration
	count func() (int, error)

	mu  sync.Mutex
	at  time.Time
	n   int
	err error
}

func (c *fdCache) get() (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at.IsZero() || time.Since(c.at) >= c.ttl {
		c.n, c.err = c.count()
		c.at = time.Now()
	}
	return c.n, c.err
}

// writeGoMetrics writes the Go runtime's families: memory, GC, goroutines.
func writeGoMetrics(w io.Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for _, g := range []struct {
		name, help string
		v          uint64
	}{
		{"go_memstats_heap_alloc_bytes", "Bytes of allocated heap objects.", ms.HeapAlloc},
		{"go_memstats_heap_inuse_bytes", "Bytes in in-use heap spans.", ms.HeapInuse},
		{"go_memstats_heap_idle_bytes", "Bytes in idle heap spans.", ms.HeapIdle},
		{"go_memstats_heap_released_bytes", "Bytes of heap returned to the OS.", ms.HeapReleased},
		{"go_memstats_heap_objects", "Allocated heap objects.", ms.HeapObjects},
		{"go_memstats_stack_inuse_bytes", "Bytes in stack spans.", ms.StackInuse},
		{"go_memstats_sys_bytes", "Bytes obtained from the OS by the Go runtime.", ms.Sys},
		{"go_memstats_next_gc_bytes", "Heap size target of the next GC cycle.", ms.NextGC},
		{"go_goroutines", "Goroutines that currently exist.", uint64(runtime.NumGoroutine())},
		{"go_gomaxprocs", "GOMAXPROCS.", uint64(runtime.GOMAXPROCS(0))},
	} {
		writeHelped(w, g.name, "gauge", g.help, strconv.FormatUint(g.v, 10))
	}
	writeHelped(w, "go_memstats_alloc_bytes_total", "counter", "Bytes allocated for heap objects, freed or not.", strconv.FormatUint(ms.TotalAlloc, 10))
	writeHelped(w, "go_gc_cycles_total", "counter", "Completed GC cycles.", strconv.FormatUint(uint64(ms.NumGC), 10))
	writeHelped(w, "go_gc_pause_seconds_total", "counter", "Stop-the-world pause time of all GC cycles.", formatFloat(float64(ms.PauseTotalNs)/1e9))
	fmt.Fprintf(w, "# HELP go_info Go version.\n# TYPE go_info gauge\ngo_info{version=%q} 1\n", runtime.Version())
}

// writeProcessMetrics writes the process families Prometheus' client
// libraries write: CPU time, memory, file descriptors, start time. One
// that cannot be read is left out.
func writeProcessMetrics(w io.Writer) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		writeHelped(w, "process_cpu_seconds_total", "counter", "User and system CPU time spent.", formatFloat(cpu))
	}
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		st := procfs.Parse(string(b))
		for _, f := range []struct{ key, name, typ, help string }{
			{"VmSize", "process_virtual_memory_bytes", "gauge", "Virtual memory size."},
			{"VmRSS", "process_resident_memory_bytes", "gauge", "Resident memory size."},
			{"RssAnon", "process_resident_memory_anon_bytes", "gauge", "Resident anonymous memory (heap, stacks, written data)."},
			{"RssFile", "process_resident_memory_file_bytes", "gauge", "Resident file-backed memory (mostly the binary's own pages)."},
			{"VmHWM", "process_resident_memory_peak_bytes", "gauge", "Peak resident memory size."},
			{"Threads", "process_num_threads", "gauge", "OS threads."},
		} {
			if v, ok := st[f.key]; ok {
				writeHelped(w, f.name, f.typ, f.help, strconv.FormatUint(v.N, 10))
			}
		}
	}
	if fds, err := openFDs.get(); err == nil {
		writeHelped(w, "process_open_fds", "gauge", "Open file descriptors.", strconv.Itoa(fds))
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil {
		writeHelped(w, "process_max_fds", "gauge", "Limit of open file descriptors.", strconv.FormatUint(lim.Cur, 10))
	}
	writeHelped(w, "process_start_time_seconds", "gauge", "Start time since the Unix epoch.", formatFloat(float64(started.UnixMilli())/1e3))
}
