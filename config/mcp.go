package config

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/clawedge/clawedge/policy/vocab"
)

// The Model Context Protocol, both ways (docs/mcp.md):
//
//	mcp:
//	  serve:                                                     # the board's tools for MCP hosts
//	    listen: "127.0.0.1:8765"
//	    tokens: {desktop: "${MCP_DESKTOP_TOKEN}"}                # host mcp:desktop
//	  servers:                                                   # MCP servers' tools for the board
//	    everything: {command: ["npx", "-y", "@modelcontextprotocol/server-everything"], env: {DEBUG: "0"}}
//	    home: {url: "http://192.168.1.20:8123/mcp_server/sse", headers: {Authorization: "Bearer ${HA_TOKEN}"}}
//
// Off while absent. Decoding, validation and the Redacted writer are here.

// MCP is the mcp section.
type MCP struct {
	// Serve, when set, makes the daemon an MCP server over streamable HTTP.
	Serve *MCPServe `yaml:"serve"`
	// Servers are the MCP servers whose tools are registered as <server>/<tool>.
	Servers map[string]MCPServer `yaml:"servers"`
}

// MCPServe is the daemon's MCP endpoint: http://<listen>/mcp with a bearer token.
type MCPServe struct {
	Listen string `yaml:"listen"`
	// Tokens are the bearer tokens a request may carry, by name: a host
	// that authenticated with Tokens[NAME] is the principal mcp:NAME,
	// whatever its handshake says. One token (or Token) is always required
	// (a loopback port is open to every local user).
	Tokens map[string]Secret `yaml:"tokens"`
	// Token is the single token of the old form: its hosts are mcp:token
	// (vocab.MCPSingleToken). Kept working; `config check` warns.
	Token Secret `yaml:"token"`
}

// HostTokens are the tokens by the name of the host principal each makes
// (mcp:NAME): Tokens, and Token as "token".
func (s *MCPServe) HostTokens() map[string]string {
	out := map[string]string{}
	for name, t := range s.Tokens {
		out[name] = t.Reveal()
	}
	if s.Token != "" {
		out[vocab.MCPSingleToken] = s.Token.Reveal()
	}
	return out
}

// MCPServer is one MCP server clawedge connects to: a command started with
// its stdin/stdout as the transport, or a URL (streamable HTTP, or SSE).
type MCPServer struct {
	Command []string          `yaml:"command"`
	Env     map[string]Secret `yaml:"env"`
	URL     string            `yaml:"url"`
	Headers map[string]Secret `yaml:"headers"`
	// Transport is "http" (streamable HTTP) or "sse"; empty: sse when the URL's
	// path ends in /sse, else http. Commands speak stdio.
	Transport string `yaml:"transport"`
	// Timeout bounds one call (and the start-up handshake).
	Timeout Duration `yaml:"timeout"`
	// MaxOutput bounds the bytes of one call's result kept; the rest is cut.
	MaxOutput int `yaml:"max_output"`
	// TrustReadOnly takes the server's readOnlyHint at its word: its tools
	// that say they change nothing join the policy's group:readonly. Off by
	// default: a hint is the server's claim, not a fact.
	TrustReadOnly bool `yaml:"trust_read_only"`
	// Read, Write and Network are what a command's process may reach: it
	// runs in the sandbox, as sys/exec and skills' programs do, with read
	// (and execute) beneath Read, read and write beneath Write, and sockets
	// to connect out only when Network is set. Nothing else of the board.
	Read    []string `yaml:"read"`
	Write   []string `yaml:"write"`
	Network bool     `yaml:"network"`
}

var (
	mcpKeys       = []string{"serve", "servers"}
	mcpServeKeys  = []string{"listen", "tokens", "token"}
	mcpServerKeys = []string{"command", "env", "url", "headers", "transport", "timeout", "max_output", "trust_read_only", "read", "write", "network"}
)

const (
	defaultMCPTimeout   = Duration(30 * time.Second)
	defaultMCPMaxOutput = 64 << 10
)

func (d *decoder) mcp(n ast.Node, dst **MCP) {
	if isNull(d.resolveQuiet(n)) {
		return
	}
	m := &MCP{}
	d.fields(n, "mcp", mcpKeys, func(k string, v ast.Node) {
		switch k {
		case "serve":
			if isNull(d.resolveQuiet(v)) {
				return
			}
			s := &MCPServe{}
			d.fields(v, "mcp.serve", mcpServeKeys, func(k string, v ast.Node) {
				switch k {
				case "listen":
					d.str(v, "mcp.serve.listen", &s.Listen)
				case "token":
					d.secret(v, "mcp.serve.token", &s.Token)
				case "tokens":
					list := map[string]Secret{}
					if d.entries(v, "mcp.serve.tokens", func(name string, v ast.Node) {
						var sv Secret
						d.secret(v, "mcp.serve.tokens."+name, &sv)
						list[name] = sv
					}) {
						s.Tokens = nilIfEmpty(list)
					}
				}
			})
			m.Serve = s
		case "servers":
			list := map[string]MCPServer{}
			if d.entries(v, "mcp.servers", func(name string, v ast.Node) {
				list[name] = d.mcpServer(v, "mcp.servers."+name)
			}) {
				m.Servers = nilIfEmpty(list)
			}
		}
	})
	*dst = m
}

func (d *decoder) mcpServer(n ast.Node, sp string) MCPServer {
	s := MCPServer{Timeout: defaultMCPTimeout, MaxOutput: defaultMCPMaxOutput}
	secrets := func(v ast.Node, path string) map[string]Secret {
		out := map[string]Secret{}
		d.entries(v, path, func(k string, v ast.Node) {
			var sv Secret
			d.secret(v, path+"."+k, &sv)
			out[k] = sv
		})
		return nilIfEmpty(out)
	}
	d.fields(n, sp, mcpServerKeys, func(k string, v ast.Node) {
		kp := sp + "." + k
		switch k {
		case "command":
			d.items(v, kp, func(i int, v ast.Node) {
				var a string
				d.str(v, fmt.Sprintf("%s[%d]", kp, i), &a)
				s.Command = append(s.Command, a)
			})
		case "env":
			s.Env = secrets(v, kp)
		case "url":
			d.str(v, kp, &s.URL)
		case "headers":
			s.Headers = secrets(v, kp)
		case "transport":
			d.str(v, kp, &s.Transport)
		case "timeout":
			d.duration(v, kp, &s.Timeout)
		case "max_output":
			d.intIn(v, kp, &s.MaxOutput, 1024, 64<<20)
		case "trust_read_only":
			d.boolean(v, kp, &s.TrustReadOnly)
		case "read":
			s.Read = d.strings(v, kp)
		case "write":
			s.Write = d.strings(v, kp)
		case "network":
			d.boolean(v, kp, &s.Network)
		}
	})
	return s
}

// loopbackHost reports whether host (of a listen address) is on this machine only.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (d *decoder) validateMCP(m *MCP) {
	if m == nil {
		return
	}
	if s := m.Serve; s != nil {
		host, port, err := net.SplitHostPort(s.Listen)
		p, perr := strconv.Atoi(port)
		switch {
		case s.Listen == "":
			d.missing("mcp.serve.listen", ` (host:port, such as "127.0.0.1:8765")`)
		case err != nil:
			d.errf("mcp.serve.listen", "%s is not host:port (such as \"127.0.0.1:8765\")", d.quote("mcp.serve.listen", s.Listen))
		case perr != nil || p < 1 || p > 65535:
			d.errf("mcp.serve.listen", "port %s is not from 1 to 65535", port)
		case host != "" && net.ParseIP(host) == nil && host != "localhost":
			d.errf("mcp.serve.listen", "%s: the host must be an IP address or localhost (empty: every interface)", d.quote("mcp.serve.listen", s.Listen))
		}
		if s.Token == "" && len(s.Tokens) == 0 {
			where := "even on loopback, where every local user can reach the port"
			if err == nil && !loopbackHost(host) {
				where = "to listen beyond loopback"
			}
			d.missing("mcp.serve.tokens", " ("+where+`; such as {desktop: "${MCP_DESKTOP_TOKEN}"}, the host then being mcp:desktop)`)
		}
		// Which token a request carried names its host: two names of one
		// value would make it either.
		seen := map[string]string{}
		check := func(path, name string, tok Secret) {
			switch {
			case tok == "":
				d.errf(path, "is empty: a bearer token of at least 16 random characters")
			case len(tok) < 16:
				d.errf(path, "is too short to be a bearer token: use at least 16 random characters")
			case strings.ContainsFunc(tok.Reveal(), func(r rune) bool { return r <= ' ' || r == 0x7f }):
				d.errf(path, "holds a space or a control character: an Authorization header cannot carry it")
			case seen[tok.Reveal()] != "":
				d.errf(path, "is the same token as %s: each host's token must be its own, since the token names the host", seen[tok.Reveal()])
			default:
				seen[tok.Reveal()] = path
			}
		}
		for _, name := range byPosition(d, "mcp.serve.tokens.", s.Tokens) {
			path := "mcp.serve.tokens." + name
			if !vocab.MCPHost(name) {
				d.add(d.keyAt(path), "mcp.serve.tokens: %s is not a host name: a lower-case letter, then lower-case letters, digits, _ and -, at most 32 (the host is mcp:NAME)", strconv.Quote(name))
				continue
			}
			if name == vocab.MCPSingleToken && s.Token != "" {
				d.add(d.keyAt(path), "mcp.serve.tokens: %q names the host of mcp.serve.token (mcp:%s); give this one another name", name, name)
				continue
			}
			check(path, name, s.Tokens[name])
		}
		if s.Token != "" {
			check("mcp.serve.token", vocab.MCPSingleToken, s.Token)
		}
	}
	for _, name := range byPosition(d, "mcp.servers.", m.Servers) {
		sp := "mcp.servers." + name
		s := m.Servers[name]
		d.checkName("mcp.servers", name, "MCP server")
		switch {
		case len(s.Command) == 0 && s.URL == "":
			d.add(d.keyAt(sp), "%s: needs a command (stdio) or a url (HTTP or SSE)", sp)
		case len(s.Command) > 0 && s.URL != "":
			d.add(d.keyAt(sp), "%s: has both a command and a url; an MCP server is one or the other", sp)
		case len(s.Command) > 0:
			if s.Command[0] == "" {
				d.errf(sp+".command", "the program (the first item) must not be empty")
			}
			if len(s.Headers) > 0 || s.Transport != "" {
				d.errf(sp, "headers and transport apply to a url, not a command")
			}
			for _, list := range []struct {
				key   string
				paths []string
			}{{sp + ".read", s.Read}, {sp + ".write", s.Write}} {
				for i, p := range list.paths {
					pp := fmt.Sprintf("%s[%d]", list.key, i)
					if msg := execPath(p); msg != "" {
						d.errf(pp, "%s %s", d.quote(pp, p), msg)
					}
				}
			}
		default:
			u, err := url.Parse(s.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.errf(sp+".url", "must be an http:// or https:// URL, found %s", d.quote(sp+".url", s.URL))
			} else if u.User != nil {
				d.errf(sp+".url", "must not carry credentials (user:password@): URLs are logged; use headers")
			}
			if len(s.Env) > 0 {
				d.errf(sp+".env", "applies to a command, not a url")
			}
			if len(s.Read) > 0 || len(s.Write) > 0 || s.Network {
				d.errf(sp, "read, write and network confine a command's process; a url's server runs elsewhere")
			}
			if s.Transport != "" {
				d.oneOf(sp+".transport", s.Transport, []string{"http", "sse"})
			}
		}
		if s.Timeout < Duration(time.Second) {
			d.errf(sp+".timeout", "must be at least 1s, found %s", s.Timeout)
		}
	}
}

// secretValues are the mcp section's secret values, scrubbed from the rest
// of the Redacted output.
func (m *MCP) secretValues() []string {
	if m == nil {
		return nil
	}
	var out []string
	if m.Serve != nil {
		for _, t := range m.Serve.HostTokens() {
			out = append(out, t)
		}
	}
	for _, s := range m.Servers {
		for _, v := range s.Env {
			out = append(out, v.Reveal())
		}
		for _, v := range s.Headers {
			out = append(out, v.Reveal())
		}
	}
	return out
}

// writeMCP writes the mcp section for Redacted.
func (c *Config) writeMCP(w *writer) {
	m := c.MCP
	if m == nil {
		return
	}
	w.key(0, "mcp")
	if s := m.Serve; s != nil {
		w.key(1, "serve")
		w.kv(2, "listen", w.str(s.Listen))
		if len(s.Tokens) > 0 {
			w.key(2, "tokens")
			for _, k := range sortedKeys(s.Tokens) {
				w.kv(3, yamlKey(k), yamlString(s.Tokens[k].String()))
			}
		}
		if s.Token != "" {
			w.kv(2, "token", yamlString(s.Token.String()))
		}
	}
	if len(m.Servers) == 0 {
		return
	}
	secrets := func(level int, key string, m map[string]Secret) {
		if len(m) == 0 {
			return
		}
		w.key(level, key)
		for _, k := range sortedKeys(m) {
			w.kv(level+1, yamlKey(k), yamlString(m[k].String()))
		}
	}
	w.key(1, "servers")
	for _, name := range sortedKeys(m.Servers) {
		s := m.Servers[name]
		w.key(2, yamlKey(name))
		if len(s.Command) > 0 {
			w.key(3, "command")
			for _, a := range s.Command {
				w.item(4, w.str(a))
			}
		}
		secrets(3, "env", s.Env)
		w.kvOmit(3, "url", s.URL)
		secrets(3, "headers", s.Headers)
		w.kvOmit(3, "transport", s.Transport)
		w.kv(3, "timeout", s.Timeout.String())
		w.kv(3, "max_output", strconv.Itoa(s.MaxOutput))
		if s.TrustReadOnly {
			w.kv(3, "trust_read_only", "true")
		}
		for _, l := range []struct {
			key   string
			paths []string
		}{{"read", s.Read}, {"write", s.Write}} {
			if len(l.paths) > 0 {
				w.key(3, l.key)
				for _, p := range l.paths {
					w.item(4, w.str(p))
				}
			}
		}
		if s.Network {
			w.kv(3, "network", "true")
		}
	}
}
