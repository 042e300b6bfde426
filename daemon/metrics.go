package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/internal/metrics"
	"github.com/clawedge/clawedge/llm/router"
)

// The Prometheus endpoint (metrics: {listen: ...}). The counters live where
// things happen (tools, channels, store) in internal/metrics' registry;
// what is already counted elsewhere (the router's totals, the runner) is
// written at scrape time from the serving app.

// metricsApp is the app whose router and runner the endpoint reports.
var (
	metricsApp    atomic.Pointer[Core]
	metricsWriter sync.Once
)

// serveMetrics serves /metrics when configured, and reports whether it does.
// A listen address in use is logged, not fatal: the board's work goes on.
func (a *Core) serveMetrics(ctx context.Context, wg *sync.WaitGroup) bool {
	mc := a.cfg.Metrics
	if mc == nil {
		return false
	}
	ln, err := net.Listen("tcp", mc.Listen)
	if err != nil {
		a.log.Warn("metrics: cannot listen; no Prometheus endpoint", "listen", mc.Listen, "err", err)
		return false
	}
	// A stranger who can reach the port must not exhaust the daemon: at most
	// MetricsMaxConns connections are served at once, fairly
	// (metricsListener), and each is bounded in time and header size.
	// Measured before: 12,000 idle connections took the daemon to 888 MB
	// and stopped its control socket answering.
	metricsApp.Store(a)
	metricsWriter.Do(func() { metrics.RegisterMetricsWriter(writeAppMetrics) })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		var page bytes.Buffer
		metrics.WritePrometheus(&page, true) // true: process metrics, RSS among them
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.Write(withHelp(page.Bytes()))
	})
	srv := &http.Server{Handler: mux,
		// Prometheus sends its request at once; a connection that sends
		// nothing holds one of the few slots for this long at most.
		ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 10 * time.Second, IdleTimeout: 30 * time.Second,
		MaxHeaderBytes: 8 << 10}
	ln = metricsListener(ln, srv)
	a.log.Info("metrics: serving Prometheus text", "url", "http://"+ln.Addr().String()+"/metrics")
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Warn("metrics: server stopped", "err", err)
		}
	})
	wg.Go(func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		metricsApp.CompareAndSwap(a, nil)
	})
	return true
}

// MetricsMaxConns bounds the metrics endpoint's open connections: a
// Prometheus server or two keep one each; a few more leave room for curl.
const MetricsMaxConns = 16

// metricHelp is the HELP text of clawedge's own families; internal/metrics
// writes their HELP lines without text.
var metricHelp = map[string]string{
	"clawedge_commands_total":            "Command lines run, by channel and outcome.",
	"clawedge_tool_calls_total":          "Tool calls, by tool and outcome.",
	"clawedge_store_commit_seconds":      "Time of each store write transaction, fsync included.",
	"clawedge_telegram_updates_total":    "Telegram updates received.",
	"clawedge_telegram_sends_total":      "Telegram sendMessage calls, by outcome.",
	"clawedge_mqtt_connected":            "1 while connected to the MQTT broker.",
	"clawedge_mqtt_connects_total":       "Connections made to the MQTT broker.",
	"clawedge_mqtt_commands_total":       "Commands received over MQTT, by outcome (ok, error, refused, duplicate, limited).",
	"clawedge_model_calls_total":         "Model calls, by provider.",
	"clawedge_model_failures_total":      "Failed model calls, by provider.",
	"clawedge_model_tokens_total":        "Model tokens, by provider and direction.",
	"clawedge_model_reply_seconds_total": "Total time of model replies, by provider.",
	"clawedge_runner_up":                 "1 while the local model runner process is running.",
	"clawedge_runner_starts_total":       "Starts of the local model runner process.",
	"clawedge_uptime_seconds":            "Time since the daemon started.",
	"clawedge_automation_runs_total":     "Automation runs, by automation and outcome (ok, error, skipped).",
}

// withHelp fills in the HELP text of clawedge's families.
func withHelp(page []byte) []byte {
	lines := bytes.SplitAfter(page, []byte("\n"))
	for i, l := range lines {
		if name, ok := bytes.CutPrefix(bytes.TrimSuffix(l, []byte("\n")), []byte("# HELP ")); ok {
			if h, ok := metricHelp[string(name)]; ok {
				lines[i] = []byte("# HELP " + string(name) + " " + h + "\n")
			}
		}
	}
	return bytes.Join(lines, nil)
}

// writeAppMetrics writes the model router's totals by provider and the local
// runner's state.
func writeAppMetrics(w io.Writer) {
	a := metricsApp.Load()
	if a == nil {
		return
	}
	if a.router != nil {
		stats := a.router.Stats()
		// One family at a time: a TYPE line may appear once per family.
		for _, f := range []struct {
			name string
			v    func(router.Stats) float64
		}{
			{`clawedge_model_calls_total{provider="%s"}`, func(s router.Stats) float64 { return float64(s.Calls) }},
			{`clawedge_model_failures_total{provider="%s"}`, func(s router.Stats) float64 { return float64(s.Failures) }},
			{`clawedge_model_tokens_total{provider="%s",direction="in"}`, func(s router.Stats) float64 { return float64(s.TokensIn) }},
			{`clawedge_model_tokens_total{provider="%s",direction="out"}`, func(s router.Stats) float64 { return float64(s.TokensOut) }},
			{`clawedge_model_reply_seconds_total{provider="%s"}`, func(s router.Stats) float64 { return s.Latency.Seconds() }},
		} {
			if !strings.Contains(f.name, `"out"`) { // the in and out lines are one family
				metrics.WriteMetadataIfNeeded(w, f.name, "counter")
			}
			for _, s := range stats {
				fmt.Fprintf(w, f.name+" %g\n", channels.LabelValue(s.Name), f.v(s))
			}
		}
	}
	if a.local != nil {
		up := 0
		if a.local.PID() > 0 {
			up = 1
		}
		metrics.WriteGaugeUint64(w, "clawedge_runner_up", uint64(up))
		metrics.WriteCounterUint64(w, "clawedge_runner_starts_total", uint64(a.local.Starts()))
	}
	metrics.WriteGaugeFloat64(w, "clawedge_uptime_seconds", time.Since(a.started).Seconds())
}
