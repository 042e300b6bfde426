package daemon

import (
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/mcpclient"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/skills"
)

// OpMCPServers is the control socket op that returns the MCP servers' states.
const OpMCPServers = "mcp.servers"

// MCPServers maps mcp.servers onto the client's settings.
func MCPServers(cfg *config.Config) []mcpclient.Server {
	if cfg.MCP == nil {
		return nil
	}
	var out []mcpclient.Server
	for _, name := range slices.Sorted(maps.Keys(cfg.MCP.Servers)) {
		c := cfg.MCP.Servers[name]
		s := mcpclient.Server{Name: name, Command: c.Command, URL: c.URL,
			Timeout: time.Duration(c.Timeout), MaxOutput: c.MaxOutput, TrustReadOnly: c.TrustReadOnly,
			Read: c.Read, Write: c.Write, Network: c.Network,
			Env: map[string]string{}, Headers: map[string]string{}}
		for k, v := range c.Env {
			s.Env[k] = v.Reveal()
		}
		for k, v := range c.Headers {
			s.Headers[k] = v.Reveal()
		}
		switch c.Transport {
		case "sse":
			s.SSE = true
		case "":
			if u, err := url.Parse(c.URL); err == nil && strings.HasSuffix(u.Path, "/sse") {
				s.SSE = true
			}
		}
		out = append(out, s)
	}
	return out
}

// mcpManager is the manager of the configured MCP servers; nil: none.
func (a *Core) mcpManager() *mcpclient.Manager {
	if len(MCPServers(a.cfg)) == 0 {
		return nil
	}
	return &mcpclient.Manager{Registry: a.reg, Log: a.log, Box: MCPBox(a.cfg, a.warn), Launch: MCPLaunch, PATH: skills.ScriptPATH}
}

// MCPLaunch grants a command server's program what its start executes, as
// a skill's script is granted (skills.ProgramLaunch): `npx` is a script for
// env and node.
func MCPLaunch(program string, read []string) ([]string, error) {
	if real, err := filepath.EvalSymlinks(program); err == nil {
		program = real
	}
	l, err := skills.ProgramLaunch(program, read)
	return l.Grants, err
}

// MCPBox confines the command servers: their code is not ours. They get
// what their entry declares (read, write, network), never data_dir or the
// config's folder; a kernel without Landlock refuses them unless
// exec.allow_without_landlock accepts the weaker confinement, as for
// sys/exec and skills.
func MCPBox(cfg *config.Config, warn func(string)) *sandbox.Runner {
	return &sandbox.Runner{AllowWithoutLandlock: cfg.Exec.AllowWithoutLandlock, Warn: warn, Protected: ProtectedPaths(cfg)}
}
