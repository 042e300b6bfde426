package main

import (
	"cmp"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/channels/mcpserver"
	"github.com/clawedge/clawedge/daemon"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the board's tools to an MCP host over stdio (forwarded to the daemon when one runs)",
		Long: `mcp speaks the Model Context Protocol on stdin/stdout, for an MCP host to start from its
config (Claude Desktop, VS Code, Cursor). It offers the tools the policy allows on channel mcp;
every call is checked and audited as mcp:uid:N, N the uid this runs as (the daemon takes it
from the kernel, never from the host's handshake, whose name is only shown), and an ask waits
for approval on another channel. When a daemon runs, the calls go to it (it holds the pins). See docs/mcp.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			ctx, stop := stopOnSignal(cmd.Context())
			defer stop()
			var b mcpserver.Backend
			d, err := dialDaemon(cfg)
			if err != nil {
				return err
			}
			if d != nil {
				d.Close()
				b = mcpserver.Remote{Path: daemon.ControlPath(cfg), User: cmp.Or(os.Getenv("USER"), "cli")}
			} else {
				a, err := openCore(cfg, g)
				if err != nil {
					return err
				}
				defer a.Close()
				// No console runs beside it: a call that asks is refused at
				// once rather than waiting for nobody.
				a.Authorizer().Approvals = nil
				// The board is this process's: its host is the user it runs as.
				b = mcpserver.Local{Runner: a.Runner(), Policy: a.Policy(), Principal: fmt.Sprintf("uid:%d", os.Getuid())}
			}
			s, err := mcpserver.New(ctx, b, version)
			if err != nil {
				return err
			}
			return s.Run(ctx, &mcp.StdioTransport{MaxLineLength: mcpserver.MaxMessage})
		},
	}
}
