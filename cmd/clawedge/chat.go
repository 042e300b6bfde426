package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/mcpclient"
)

func newChatCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "chat",
		Short: "Talk to clawedge on stdin/stdout; with piped input, one message per line, then exit",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			ctx, leave := context.WithCancel(cmd.Context())
			defer leave()
			var h channels.Handler
			where := ""
			d, err := dialDaemon(cfg)
			if err != nil {
				return err
			}
			if d != nil {
				defer d.Close()
				h, where = d, "the running daemon ("+daemon.ControlPath(cfg)+")"
			} else {
				a, err := openCore(cfg, g)
				if err != nil {
					return err
				}
				defer a.Close()
				// This process holds the store, so no daemon runs: calls left
				// without an outcome were interrupted (as serve does).
				if _, err := a.Store().Interrupted(); err != nil {
					return err
				}
				h, where = a.Dispatcher(), "board "+a.Board().Driver()
				// Without a daemon, this process is the one that offers the
				// MCP servers' tools, as `clawedge run` does; they used to be
				// left out without a word while `clawedge tools` listed them.
				var mcpWG sync.WaitGroup
				defer func() { leave(); mcpWG.Wait() }() // the MCP servers stop before the app closes
				startChatMCP(ctx, a, &mcpWG, os.Stderr)
			}
			m := &daemon.Mannered{H: h, Leave: leave}
			c := daemon.StdinConsole(m)
			if c.Prompt != "" {
				fmt.Printf("clawedge %s, talking to %s. Type help, or a command like @gpio/write{pin=\"led\";value=1}. exit, quit or Ctrl-D quits.\n", version, where)
			}
			var in io.Reader = os.Stdin
			if c.Prompt != "" { // a person at a terminal: line editing and history
				if lines, restore, ok := startLineEditor(os.Stdin, os.Stdout, c.Prompt); ok {
					defer restore()
					in = lines
				}
			}
			err = c.Serve(ctx, in, os.Stdout)
			if c.Prompt != "" {
				fmt.Println() // the shell's prompt on a line of its own
			}
			if errors.Is(err, context.Canceled) && cmd.Context().Err() == nil {
				err = nil // exit or quit
			}
			if err == nil && c.Prompt == "" && m.FailedTurn.Load() {
				// Piped input is a script: a failed model turn must not pass
				// for success.
				return &exitError{code: 1, err: errors.New("a model turn failed (its error is above)")}
			}
			return err
		},
	}
}

// chatMCPWait bounds how long chat waits for its MCP servers before the
// first line: a server that takes longer joins later, as in the daemon.
var chatMCPWait = 15 * time.Second

// startChatMCP starts the configured MCP servers for a chat without a
// daemon, waits until each is ready or failed (so a first line, or a piped
// script, finds their tools), and says in one line on w what came of them.
func startChatMCP(ctx context.Context, a *daemon.Core, wg *sync.WaitGroup, w io.Writer) {
	op := a.StartMCPClients(ctx, wg)
	if op == nil {
		return // no MCP servers configured
	}
	var states []mcpclient.State
	for deadline := time.Now().Add(chatMCPWait); ; time.Sleep(50 * time.Millisecond) {
		states = op()
		starting := slices.ContainsFunc(states, func(s mcpclient.State) bool { return s.State == "starting" })
		if !starting || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	var parts []string
	for _, s := range states {
		parts = append(parts, fmt.Sprintf("%s %s (%d tools)", termsafe.Line(s.Name), termsafe.Line(s.State), len(s.Tools)))
	}
	fmt.Fprintf(w, "MCP servers, started for this chat: %s\n", strings.Join(parts, "; "))
}
