package main

import (
	"context"
	"testing"
	"time"
)

// runInProcess runs `clawedge run --config cfgPath` in this process (so the
// test can reach the simulated board) and stops it when the test ends,
// failing the test if it does not stop or stops with an error.
func runInProcess(t *testing.T, cfgPath, logLevel string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"run", "--config", cfgPath, "--log-level", logLevel})
		done <- root.ExecuteContext(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("run: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("run did not stop")
		}
	})
}
