package main

import (
	"fmt"
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
			c := stdinConsole(h)
			if c.Prompt != "" {
				fmt.Printf("clawedge %s, talking to %s. Type help, or a command like @gpio/write{pin=\"led\";value=1}. Ctrl-D quits.\n", version, where)
			}
			return c.Serve(cmd.Context(), os.Stdin, os.Stdout)
		},
	}
}
