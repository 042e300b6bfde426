package doctor

import (
	"fmt"

	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/mcpclient"
)

// MCP are doctor's lines for the MCP servers.
func MCP(states []mcpclient.State, err error) []Check {
	if err != nil {
		return []Check{{What: "mcp servers", Info: err.Error()}}
	}
	var out []Check
	for _, s := range states {
		c := Check{What: "mcp server " + s.Name, OK: s.State == "ready"}
		if c.OK {
			c.Info = fmt.Sprintf("ready, %d tools", len(s.Tools))
			if s.Starts > 1 {
				c.Info += fmt.Sprintf(" (started %d times)", s.Starts)
			}
		} else {
			c.Info = termsafe.Line(s.State) // a server's error
			c.Fix = fmt.Sprintf("check mcp.servers.%s (the command runs and speaks MCP on stdout; the url answers, with its headers)", s.Name)
			if s.Rights != "" {
				c.Fix += fmt.Sprintf("; a command runs sandboxed: a path it needs and may not reach goes in mcp.servers.%s.read (or write), a network it needs in network: true", s.Name)
			}
		}
		if s.Rights != "" {
			c.Info += "; " + s.Rights
		}
		out = append(out, c)
	}
	return out
}
