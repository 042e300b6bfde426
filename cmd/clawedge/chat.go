package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/clawedge/clawedge/channels"
	"github.com/spf13/cobra"
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
			var h channels.Handler
			where := ""
			d, err := dialDaemon(cfg)
			if err != nil {
				return err
			}
			if d != nil {
				defer d.Close()
				h, where = d, "the running daemon ("+controlPath(cfg)+")"
			} else {
				a, err := openApp(cfg, g, slog.LevelWarn)
				if err != nil {
					return err
				}
				defer a.close()
				// This process holds the store, so no daemon runs: calls left
				// without an outcome were interrupted (as serve does).
				if _, err := a.store.Interrupted(); err != nil {
					return err
				}
				h, where = a.dispatcher(), "board "+a.board.Driver()
			}
			ctx, leave := context.WithCancel(cmd.Context())
			defer leave()
			m := &mannered{h: h, leave: leave}
			c := stdinConsole(m)
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
			if err == nil && c.Prompt == "" && m.failedTurn.Load() {
				// Piped input is a script: a failed model turn must not pass
				// for success.
				return &exitError{code: 1, err: errors.New("a model turn failed (its error is above)")}
			}
			return err
		},
	}
}
