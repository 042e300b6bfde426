package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMetricsEndpoint runs the daemon in-process with metrics: on a free port,
// runs a command through its control socket, and checks that the counters moved
// and that the page passes `promtool check metrics` (Debian's prometheus
// package; the test skips without it unless CLAWEDGE_REQUIRE_PROMTOOL is set).
func TestMetricsEndpoint(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CLAWEDGE_REQUIRE_PROMTOOL") != "" {
			t.Fatal("promtool is not installed (apt-get install prometheus) and CLAWEDGE_REQUIRE_PROMTOOL is set")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfgPath, _ := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nmetrics: {listen: %q}\n", addr))
	runInProcess(t, cfgPath, "warn")
	scrape := func() string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := http.Get("http://" + addr + "/metrics")
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, body)
				}
				return string(body)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no metrics endpoint: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	value := func(page, series string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(page)
		if m == nil {
			return 0
		}
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatalf("%s: %v", series, err)
		}
		return v
	}
	before := scrape()
	runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=1}`)
	after := scrape()
	const call = `clawedge_tool_calls_total{tool="gpio/write",outcome="ok"}`
	if d := value(after, call) - value(before, call); d != 1 {
		t.Errorf("%s moved by %v, want 1\n%s", call, d, after)
	}
	if d := value(after, "clawedge_store_commit_seconds_count") - value(before, "clawedge_store_commit_seconds_count"); d < 2 {
		t.Errorf("store commits moved by %v; the intent and the outcome are two", d)
	}
	for _, s := range []string{"clawedge_commands_total{channel=", "process_resident_memory_bytes ", "clawedge_uptime_seconds "} {
		if !strings.Contains(after, s) {
			t.Errorf("no %s in\n%s", s, after)
		}
	}
	// Exit 1 is a page that does not parse; 3 is lint advice (no HELP text, a
	// counter not named _total...). The whole page, Go and process families
	// included, must get none.
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(after)
	out, err := check.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\npage:\n%s", err, out, after)
	}
	if m := regexp.MustCompile(`(?m)^clawedge_.*$`).FindAllString(string(out), -1); m != nil {
		t.Errorf("promtool lint on clawedge's metrics: %q", m)
	}
}
