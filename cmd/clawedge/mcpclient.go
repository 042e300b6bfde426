package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/clawedge/clawedge/internal/termsafe"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/mcpclient"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/tools"
)

// opMCPServers is the control socket op that returns the MCP servers' states.
const opMCPServers = "mcp.servers"

// mcpServers maps mcp.servers onto the client's settings.
func mcpServers(cfg *config.Config) []mcpclient.Server {
	if cfg.MCP == nil {
		return nil
	}
	var out []mcpclient.Server
	for _, name := range sortedKeys(cfg.MCP.Servers) {
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

// startMCPClients starts the configured MCP servers; their tools join the
// registry as they come up. The op it returns reports their states.
func (a *app) startMCPClients(ctx context.Context, wg *sync.WaitGroup) map[string]func(json.RawMessage) (any, error) {
	servers := mcpServers(a.cfg)
	if len(servers) == 0 {
		return nil
	}
	m := &mcpclient.Manager{Registry: a.reg, Log: a.log, Box: mcpBox(a.cfg, a.warn), Launch: mcpLaunch, PATH: skills.ScriptPATH}
	started := m.Start(ctx, servers)
	wg.Go(started.Wait)
	return map[string]func(json.RawMessage) (any, error){
		opMCPServers: func(json.RawMessage) (any, error) { return m.States(), nil },
	}
}

// mcpStates asks the daemon for its MCP servers' states, or, with no daemon,
// connects to each once.
func mcpStates(cfg *config.Config) ([]mcpclient.State, error) {
	servers := mcpServers(cfg)
	if len(servers) == 0 {
		return nil, nil
	}
	d, err := dialDaemon(cfg)
	if err != nil {
		return nil, err
	}
	if d != nil {
		defer d.Close()
		raw, err := d.Op(opMCPServers, nil)
		if err != nil {
			return nil, err
		}
		var st []mcpclient.State
		return st, json.Unmarshal(raw, &st)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	m := &mcpclient.Manager{Log: log, Box: mcpBox(cfg, nil), Launch: mcpLaunch, PATH: skills.ScriptPATH}
	return m.Probe(context.Background(), servers), nil
}

// mcpLaunch grants a command server's program what its start executes, as
// a skill's script is granted (skills.ProgramLaunch): `npx` is a script for
// env and node.
func mcpLaunch(program string, read []string) ([]string, error) {
	if real, err := filepath.EvalSymlinks(program); err == nil {
		program = real
	}
	l, err := skills.ProgramLaunch(program, read)
	return l.Grants, err
}

// mcpBox confines the command servers: their code is not ours. They get
// what their entry declares (read, write, network), never data_dir or the
// config's folder; a kernel without Landlock refuses them unless
// exec.allow_without_landlock accepts the weaker confinement, as for
// sys/exec and skills.
func mcpBox(cfg *config.Config, warn func(string)) *sandbox.Runner {
	return &sandbox.Runner{AllowWithoutLandlock: cfg.Exec.AllowWithoutLandlock, Warn: warn, Protected: protectedPaths(cfg)}
}

// policyDoors are the callers `clawedge tools` asks the policy about: the
// model at each door and the programs (a person's typed command is decided by
// the rules about that person only, and MCP tools are not denied to it).
var policyDoors = []tools.Caller{
	{Channel: "console/stdin", User: "console", Actor: tools.Model},
	{Channel: "control", User: "", Actor: tools.Model},
	{Channel: "telegram", User: "", Actor: tools.Model},
	{Channel: "web", User: "", Actor: tools.Model},
	{Channel: "mqtt", User: "mqtt", Actor: tools.Program},
	{Channel: "mcp", User: "", Actor: tools.Program},
}

// deniedEverywhere are the tools of states that the policy offers to the
// model and programs at no door.
func deniedEverywhere(pol *policy.Policy, states []mcpclient.State) []string {
	var out []string
	for _, s := range states {
		for _, t := range s.Tools {
			if !slices.ContainsFunc(policyDoors, func(c tools.Caller) bool { return pol.Offered(c, t.Name) }) {
				out = append(out, t.Name)
			}
		}
	}
	return out
}

// printMCPStates is the MCP part of `clawedge tools`; pol says which of the
// tools no door is offered.
func printMCPStates(w io.Writer, states []mcpclient.State, pol *policy.Policy) {
	// The tools' names, the state (a server's error) and why a tool is
	// degraded come from the server: their control characters are escaped.
	for _, s := range states {
		fmt.Fprintf(w, "\nMCP server %s: %s (%d tools)\n", termsafe.Line(s.Name), termsafe.Line(s.State), len(s.Tools))
		if s.Rights != "" {
			fmt.Fprintf(w, "  %s\n", s.Rights)
		}
		for _, t := range s.Tools {
			line := "  " + termsafe.Line(t.Name)
			if t.MCPName != strings.TrimPrefix(t.Name, s.Name+"/") {
				line += " (" + termsafe.Line(t.MCPName) + ")"
			}
			if t.Degraded != "" {
				line += ": validated after generation, not constrained: " + termsafe.Line(t.Degraded)
			}
			fmt.Fprintln(w, line)
		}
	}
	// Said only when true: a rule that names a server's tools offers them.
	if denied := deniedEverywhere(pol, states); len(denied) > 0 {
		for i, n := range denied {
			denied[i] = termsafe.Line(n)
		}
		fmt.Fprintf(w, "\nMCP tools are denied until a policy rule names them (policy.tools \"SERVER/*\": allow), but to a person typing a command; denied now: %s.\n", strings.Join(denied, ", "))
	}
}

// mcpChecks are doctor's lines for the MCP servers.
func mcpChecks(cfg *config.Config) []check {
	states, err := mcpStates(cfg)
	if err != nil {
		return []check{{what: "mcp servers", info: err.Error()}}
	}
	var out []check
	for _, s := range states {
		c := check{what: "mcp server " + s.Name, ok: s.State == "ready"}
		if c.ok {
			c.info = fmt.Sprintf("ready, %d tools", len(s.Tools))
			if s.Starts > 1 {
				c.info += fmt.Sprintf(" (started %d times)", s.Starts)
			}
		} else {
			c.info = termsafe.Line(s.State) // a server's error
			c.fix = fmt.Sprintf("check mcp.servers.%s (the command runs and speaks MCP on stdout; the url answers, with its headers)", s.Name)
			if s.Rights != "" {
				c.fix += fmt.Sprintf("; a command runs sandboxed: a path it needs and may not reach goes in mcp.servers.%s.read (or write), a network it needs in network: true", s.Name)
			}
		}
		if s.Rights != "" {
			c.info += "; " + s.Rights
		}
		out = append(out, c)
	}
	return out
}
