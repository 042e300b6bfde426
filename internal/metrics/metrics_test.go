package metrics

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
)

// page writes the registry's series (no process families).
func page() string {
	var b bytes.Buffer
	WritePrometheus(&b, false)
	return b.String()
}

func TestCounterFamiliesGrouped(t *testing.T) {
	GetOrCreateCounter(`t_calls_total{tool="b"}`).Add(2)
	GetOrCreateCounter(`t_calls_total_x`).Inc()
	GetOrCreateCounter(`t_calls_total{tool="a"}`).Inc()
	if c := GetOrCreateCounter(`t_calls_total{tool="b"}`); c.Get() != 2 {
		t.Errorf("the same name gave another counter: %d", c.Get())
	}
	want := `# HELP t_calls_total
# TYPE t_calls_total counter
t_calls_total{tool="a"} 1
t_calls_total{tool="b"} 2
# HELP t_calls_total_x
# TYPE t_calls_total_x counter
t_calls_total_x 1
`
	if p := page(); !strings.Contains(p, want) {
		t.Errorf("page:\n%s\nwant in it:\n%s", p, want)
	}
}

func TestHistogramCumulative(t *testing.T) {
	h := GetOrCreatePrometheusHistogramExt("t_seconds", []float64{1, 0.5})
	for _, v := range []float64{0.1, 0.5, 0.7, 3} {
		h.Update(v)
	}
	want := `# HELP t_seconds
# TYPE t_seconds histogram
t_seconds_bucket{le="0.5"} 2
t_seconds_bucket{le="1"} 3
t_seconds_bucket{le="+Inf"} 4
t_seconds_sum 4.3
t_seconds_count 4
`
	if p := page(); !strings.Contains(p, want) {
		t.Errorf("page:\n%s\nwant in it:\n%s", p, want)
	}
	hl := GetOrCreatePrometheusHistogramExt(`t_l_seconds{op="w"}`, []float64{1})
	hl.Update(2)
	want = `t_l_seconds_bucket{op="w",le="1"} 0
t_l_seconds_bucket{op="w",le="+Inf"} 1
t_l_seconds_sum{op="w"} 2
t_l_seconds_count{op="w"} 1
`
	if p := page(); !strings.Contains(p, want) {
		t.Errorf("page:\n%s\nwant in it:\n%s", p, want)
	}
}

func TestGaugeAndWriters(t *testing.T) {
	v := 1.5
	GetOrCreateGauge("t_level", func() float64 { return v })
	RegisterMetricsWriter(func(w io.Writer) { WriteCounterUint64(w, "t_written_total", 7) })
	v = 2.25 // read at scrape time
	for _, want := range []string{
		"# TYPE t_level gauge\nt_level 2.25\n",
		"# HELP t_written_total\n# TYPE t_written_total counter\nt_written_total 7\n",
	} {
		if p := page(); !strings.Contains(p, want) {
			t.Errorf("page:\n%s\nwant in it:\n%s", p, want)
		}
	}
}

func TestProcessFamilies(t *testing.T) {
	var b bytes.Buffer
	WritePrometheus(&b, true)
	for _, re := range []string{
		`(?m)^process_resident_memory_bytes [1-9][0-9]*$`,
		`(?m)^process_cpu_seconds_total [0-9.e+-]+$`,
		`(?m)^process_open_fds [1-9][0-9]*$`,
		`(?m)^process_resident_memory_anon_bytes [1-9][0-9]*$`,
		`(?m)^process_num_threads [1-9][0-9]*$`,
		`(?m)^go_goroutines [1-9][0-9]*$`,
		`(?m)^# HELP process_resident_memory_bytes \S`,
	} {
		if !regexp.MustCompile(re).MatchString(b.String()) {
			t.Errorf("no %s in\n%s", re, b.String())
		}
	}
}
