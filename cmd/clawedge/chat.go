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
			a, err := openApp(g, slog.LevelWarn)
			if err != nil {
				return err
			}
			defer a.close()
			c := stdinConsole(&channels.Dispatcher{Runner: a.runner})
			if c.Prompt != "" {
				fmt.Printf("clawedge %s on board %s. Type help, or a command like @gpio/write{pin=\"led\";value=1}. Ctrl-D quits.\n", version, a.board.Driver())
			}
			return c.Serve(cmd.Context(), os.Stdin, os.Stdout)
		},
	}
}
