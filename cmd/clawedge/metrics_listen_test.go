package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/internal/fairlisten/floodtest"
)

// TestMetricsFloodDoesNotKeepScraperOut: with 64 idle connections to the
// metrics endpoint (half keep-alive ones left after a scrape, half that sent
// nothing) and 64 that sent half a request, a scrape still succeeds: the
// listener closes them for room. Before, 16 of them held every slot (a
// keep-alive one for its 30 s of idle time) and the scrape waited in the
// backlog behind the rest.
func TestMetricsFloodDoesNotKeepScraperOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfgPath, _ := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nmetrics: {listen: %q}\n", addr))
	runInProcess(t, cfgPath, "error")
	// Each scrape on a new connection, as a Prometheus that starts does:
	// a connection kept from before the flood would hold its slot.
	scrape := func(ctx context.Context) (int, string, error) {
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/metrics", nil)
		cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := cl.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), err
	}
	// The endpoint is up.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		code, _, err := scrape(ctx)
		cancel()
		if err == nil && code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics endpoint: %d, %v", code, err)
		}
	}
	if n := floodtest.Hold(t, addr, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 64, 64); n != 128 {
		t.Fatalf("%d of 128 connections made", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, page, err := scrape(ctx)
	if err != nil || code != 200 || !strings.Contains(page, "process_open_fds ") {
		t.Fatalf("a scrape with 128 connections held: %d, %v", code, err)
	}
}
