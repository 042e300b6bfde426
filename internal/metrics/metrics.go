// Package metrics keeps clawedge's counters, gauges and histograms and writes
// them in the Prometheus text exposition format (version 0.0.4), with the Go
// runtime's and the process's own families.
//
// It replaces github.com/VictoriaMetrics/metrics, of which clawedge used a
// dozen functions: that library read /proc and the cgroup files at init
// (whether or not an endpoint was configured) and linked runtime/metrics,
// compress/gzip and its push client. The names and signatures used are kept,
// so a call site reads the same.
//
// A series is named with its labels, as it appears on the page:
// `clawedge_tool_calls_total{tool="gpio/write",outcome="ok"}`. The caller
// escapes label values; the family is the part before '{'.
package metrics

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// A metric is one registered series or histogram.
type metric interface {
	kind() string // the TYPE of its family
	write(w io.Writer, name string)
}

var (
	mu       sync.Mutex
	registry = map[string]metric{}
	writers  []func(io.Writer)
)

// getOrCreate returns the metric named name, making it with mk the first
// time. A name registered before as another kind is a programming error.
func getOrCreate[M metric](name string, mk func() M) M {
	mu.Lock()
	defer mu.Unlock()
	if m, ok := registry[name]; ok {
		if m, ok := m.(M); ok {
			return m
		}
		panic(fmt.Sprintf("metrics: %s is registered as a %s", name, registry[name].kind()))
	}
	m := mk()
	registry[name] = m
	return m
}

// Counter is a monotonic count.
type Counter struct{ n atomic.Uint64 }

// GetOrCreateCounter returns the counter of the series name.
func GetOrCreateCounter(name string) *Counter {
	return getOrCreate(name, func() *Counter { return new(Counter) })
}

func (c *Counter) Inc()        { c.n.Add(1) }
func (c *Counter) Add(n int)   { c.n.Add(uint64(n)) }
func (c *Counter) Get() uint64 { return c.n.Load() }

func (c *Counter) kind() string { return "counter" }
func (c *Counter) write(w io.Writer, name string) {
	fmt.Fprintf(w, "%s %d\n", name, c.n.Load())
}

// Gauge is a value read at scrape time.
type Gauge struct{ f func() float64 }

// GetOrCreateGauge returns the gauge of the series name, whose value f
// returns at each scrape.
func GetOrCreateGauge(name string, f func() float64) *Gauge {
	return getOrCreate(name, func() *Gauge { return &Gauge{f: f} })
}

func (g *Gauge) kind() string { return "gauge" }
func (g *Gauge) write(w io.Writer, name string) {
	fmt.Fprintf(w, "%s %s\n", name, formatFloat(g.f()))
}

// RegisterMetricsWriter adds a function that writes series of its own (with
// their metadata) at each scrape, after the registered ones.
func RegisterMetricsWriter(f func(io.Writer)) {
	mu.Lock()
	defer mu.Unlock()
	writers = append(writers, f)
}

// WritePrometheus writes every registered series, grouped by family with its
// HELP and TYPE lines, then the registered writers' series, then (if
// process) the Go runtime's and the process's families.
func WritePrometheus(w io.Writer, process bool) {
	mu.Lock()
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	ms := make(map[string]metric, len(registry))
	for n, m := range registry {
		ms[n] = m
	}
	ws := slices.Clone(writers)
	mu.Unlock()
	// By family first: a family's series must be together, and sorting the
	// whole names could put `a_total_x` between `a_total{...}` lines.
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(strings.Compare(family(a), family(b)), strings.Compare(a, b))
	})
	prev := ""
	for _, n := range names {
		if f := family(n); f != prev {
			WriteMetadataIfNeeded(w, n, ms[n].kind())
			prev = f
		}
		ms[n].write(w, n)
	}
	for _, f := range ws {
		f(w)
	}
	if process {
		writeGoMetrics(w)
		writeProcessMetrics(w)
	}
}

// WriteMetadataIfNeeded writes the HELP (without text: the endpoint fills it
// in) and TYPE lines of the family of the series name.
func WriteMetadataIfNeeded(w io.Writer, name, typ string) {
	f := family(name)
	fmt.Fprintf(w, "# HELP %s\n# TYPE %s %s\n", f, f, typ)
}

// writeHelped writes one series of a family of its own, with HELP text.
func writeHelped(w io.Writer, name, typ, help, value string) {
	fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", name, help, name, typ, name, value)
}

// WriteGaugeUint64 writes a one-series gauge family.
func WriteGaugeUint64(w io.Writer, name string, v uint64) {
	WriteMetadataIfNeeded(w, name, "gauge")
	fmt.Fprintf(w, "%s %d\n", name, v)
}

// WriteCounterUint64 writes a one-series counter family.
func WriteCounterUint64(w io.Writer, name string, v uint64) {
	WriteMetadataIfNeeded(w, name, "counter")
	fmt.Fprintf(w, "%s %d\n", name, v)
}

// WriteGaugeFloat64 writes a one-series gauge family.
func WriteGaugeFloat64(w io.Writer, name string, v float64) {
	WriteMetadataIfNeeded(w, name, "gauge")
	fmt.Fprintf(w, "%s %s\n", name, formatFloat(v))
}

func family(name string) string {
	f, _, _ := strings.Cut(name, "{")
	return f
}

// formatFloat writes v as the exposition format spells it (+Inf, -Inf, NaN).
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
