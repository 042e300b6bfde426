package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ProgressEvery is how often a call the host asked progress for says it
// still runs. Our tools do not count their own steps (a pin wait, a serial
// expect, a program run either end or not), so the progress is the time
// spent, and the message says what waits: enough for a host to show that
// the call is alive and not reset its own timeout.
var ProgressEvery = 5 * time.Second

// reportProgress sends the host, when req carries a progress token, one
// notification every ProgressEvery until stop is called.
func reportProgress(ctx context.Context, req *mcp.CallToolRequest, tool string) (stop func()) {
	token := req.Params.GetProgressToken()
	if token == nil || req.Session == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		start := time.Now()
		t := time.NewTicker(ProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				ran := now.Sub(start).Round(time.Second)
				// A host gone or slow to read loses a notification, not the call.
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token,
					Progress: ran.Seconds(), Message: fmt.Sprintf("%s running for %s", tool, ran)})
			}
		}
	}()
	return func() { cancel(); <-done }
}
