package metrics

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
)

// Histogram is a Prometheus histogram with fixed bucket upper bounds.
type Histogram struct {
	upper []float64 // sorted; +Inf is implicit

	mu     sync.Mutex
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
}

// GetOrCreatePrometheusHistogramExt returns the histogram of the family name
// with the given bucket upper bounds.
func GetOrCreatePrometheusHistogramExt(name string, upper []float64) *Histogram {
	return getOrCreate(name, func() *Histogram {
		u := slices.Clone(upper)
		slices.Sort(u)
		return &Histogram{upper: u, counts: make([]uint64, len(u)+1)}
	})
}

// Update records one observation.
func (h *Histogram) Update(v float64) {
	i, _ := slices.BinarySearch(h.upper, v) // le: the first bound >= v
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.mu.Unlock()
}

// UpdateDuration records the seconds since start.
func (h *Histogram) UpdateDuration(start time.Time) { h.Update(time.Since(start).Seconds()) }

func (h *Histogram) kind() string { return "histogram" }

func (h *Histogram) write(w io.Writer, name string) {
	h.mu.Lock()
	counts := slices.Clone(h.counts)
	sum := h.sum
	h.mu.Unlock()
	fam, labels, _ := strings.Cut(name, "{")
	labels = strings.TrimSuffix(labels, "}")
	if labels != "" {
		labels += ","
	}
	var total uint64
	for i, c := range counts {
		total += c
		le := math.Inf(1)
		if i < len(h.upper) {
			le = h.upper[i]
		}
		fmt.Fprintf(w, "%s_bucket{%sle=\"%s\"} %d\n", fam, labels, formatFloat(le), total)
	}
	suffix := ""
	if labels != "" {
		suffix = "{" + strings.TrimSuffix(labels, ",") + "}"
	}
	fmt.Fprintf(w, "%s_sum%s %s\n%s_count%s %d\n", fam, suffix, formatFloat(sum), fam, suffix, total)
}
