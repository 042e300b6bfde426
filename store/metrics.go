package store

import "github.com/clawedge/clawedge/internal/metrics"

// commitSeconds is how long each write transaction takes, its fsync included:
// the latency every acknowledged message and every audit intent waits for, and
// the first thing to grow when an SD card wears out. Buckets from 0.5 ms (an
// SSD) to 2.5 s (a dying card).
var commitSeconds = metrics.GetOrCreatePrometheusHistogramExt("clawedge_store_commit_seconds",
	[]float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5})
