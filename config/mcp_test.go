package config

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

const issue14 = `mcp:
  serve: {listen: "127.0.0.1:8765", token: "${MCP_TOKEN}"}
  servers:
    everything: {command: ["npx", "-y", "@modelcontextprotocol/server-everything"]}
    files:      {command: ["node", "/opt/mcp/files.js"], read: [/opt/mcp, /home/pi/notes], write: [/home/pi/notes/out], network: true, trust_read_only: true}
    home:       {url: "http://192.168.1.20:8123/mcp_server/sse", headers: {Authorization: "Bearer ${HA_TOKEN}"}}
`

func TestMCPIssueExample(t *testing.T) {
	env := envFrom(map[string]string{"MCP_TOKEN": "mcp-token-0123456789abcdef", "HA_TOKEN": "ha-token-secret-xyz"})
	c, err := Parse([]byte(issue14), "m.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	want := &MCP{Serve: &MCPServe{Listen: "127.0.0.1:8765", Token: "mcp-token-0123456789abcdef"},
		Servers: map[string]MCPServer{
			"everything": {Command: []string{"npx", "-y", "@modelcontextprotocol/server-everything"}, Timeout: Duration(30 * time.Second), MaxOutput: 64 << 10},
			"files": {Command: []string{"node", "/opt/mcp/files.js"}, Read: []string{"/opt/mcp", "/home/pi/notes"}, Write: []string{"/home/pi/notes/out"},
				Network: true, TrustReadOnly: true, Timeout: Duration(30 * time.Second), MaxOutput: 64 << 10},
			"home": {URL: "http://192.168.1.20:8123/mcp_server/sse", Headers: map[string]Secret{"Authorization": "Bearer ha-token-secret-xyz"},
				Timeout: Duration(30 * time.Second), MaxOutput: 64 << 10},
		}}
	if !reflect.DeepEqual(c.MCP, want) {
		t.Errorf("mcp = %+v\nwant %+v", c.MCP, want)
	}
	out, _ := c.Redacted()
	if strings.Contains(string(out), "mcp-token-0123") || strings.Contains(string(out), "ha-token-secret") {
		t.Errorf("a secret is in the redacted output:\n%s", out)
	}
	again := strings.Replace(string(out), `token: "[redacted]"`, `token: ${MCP_TOKEN}`, 1)
	again = strings.Replace(again, `Authorization: "[redacted]"`, `Authorization: "Bearer ${HA_TOKEN}"`, 1)
	c2, err := Parse([]byte(again), "m.yaml", env)
	if err != nil {
		t.Fatalf("redacted output does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(c.MCP, c2.MCP) {
		t.Errorf("round trip changed mcp\n%+v\n%+v\n%s", c.MCP, c2.MCP, out)
	}
}

func TestMCPErrors(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"mcp:\n  serve: {listen: \"0.0.0.0:8765\"}\n", "m.yaml:2:3: mcp.serve: tokens is required (to listen beyond loopback"},
		{"mcp:\n  serve: {listen: \"127.0.0.1:8765\"}\n", "mcp.serve: tokens is required (even on loopback"},
		{"mcp:\n  serve: {listen: \"127.0.0.1:8765\", tokens: {desktop: tiny1}}\n", "m.yaml:2:55: mcp.serve.tokens.desktop: is too short"},
		{"mcp:\n  serve:\n    listen: \"127.0.0.1:8765\"\n    tokens: {Claude Desktop: 0123456789abcdefgh}\n", "m.yaml:4:14: mcp.serve.tokens: \"Claude Desktop\" is not a host name"},
		{"mcp:\n  serve:\n    listen: \"127.0.0.1:8765\"\n    tokens: {uid: 0123456789abcdefgh, \"a.b\": 0123456789abcdefgx}\n", "mcp.serve.tokens: \"a.b\" is not a host name"},
		{"mcp:\n  serve:\n    listen: \"127.0.0.1:8765\"\n    tokens: {a: 0123456789abcdefgh, b: 0123456789abcdefgh}\n", "m.yaml:4:40: mcp.serve.tokens.b: is the same token as mcp.serve.tokens.a"},
		{"mcp:\n  serve:\n    listen: \"127.0.0.1:8765\"\n    token: 0123456789abcdefgx\n    tokens: {token: 0123456789abcdefgh}\n", "mcp.serve.tokens: \"token\" names the host of mcp.serve.token"},
		{"mcp:\n  serve:\n    listen: \"127.0.0.1:8765\"\n    tokens: {a: \"\"}\n", "mcp.serve.tokens.a: is empty"},
		{"mcp:\n  serve:\n    listen: \"127.0.0.1:8765\"\n    tokens: {a: \"0123456789 abcdefgh\"}\n", "mcp.serve.tokens.a: holds a space"},
		{"mcp:\n  serve: {listen: \"127.0.0.1:8765\", token: tiny1}\n", "mcp.serve.token: is too short"},
		{"mcp:\n  serve: {listen: \"8765\", token: 0123456789abcdefgh}\n", "mcp.serve.listen: \"8765\" is not host:port"},
		{"mcp:\n  servers:\n    x: {}\n", "mcp.servers.x: needs a command (stdio) or a url"},
		{"mcp:\n  servers:\n    x: {command: [a], url: \"http://h/\"}\n", "has both a command and a url"},
		{"mcp:\n  servers:\n    x: {url: \"ftp://h/\"}\n", "mcp.servers.x.url: must be an http:// or https:// URL"},
		{"mcp:\n  servers:\n    x: {url: \"http://h/\", transport: ws}\n", "mcp.servers.x.transport: must be http or sse"},
		{"mcp:\n  servers:\n    Bad.Name: {command: [a]}\n", "invalid MCP server name"},
		{"mcp:\n  servers:\n    x: {command: [a], tiemout: 1s}\n", "unknown key \"tiemout\""},
		{"mcp:\n  servers:\n    x: {command: [a], read: [opt/mcp]}\n", "mcp.servers.x.read[0]: \"opt/mcp\" is not an absolute path"},
		{"mcp:\n  servers:\n    x: {command: [a], write: [/tmp/../etc]}\n", "mcp.servers.x.write[0]: \"/tmp/../etc\" is not a clean path"},
		{"mcp:\n  servers:\n    x: {url: \"http://h/\", network: true}\n", "read, write and network confine a command's process"},
	} {
		_, err := Parse([]byte(tc.yaml), "m.yaml", envFrom(nil))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.yaml, err, tc.want)
		}
	}
}

// Named tokens: each host's own, by the name its principal takes (mcp:NAME);
// the old single token is the host mcp:token; both are secrets.
func TestMCPServeTokens(t *testing.T) {
	env := envFrom(map[string]string{"DESK": "desk-token-0123456789", "PHONE": "phone-token-0123456789"})
	c, err := Parse([]byte(`mcp:
  serve:
    listen: "127.0.0.1:8765"
    token: "old-single-token-0123"
    tokens: {desktop: "${DESK}", phone: "${PHONE}"}
policy:
  users:
    "mcp:desktop": {"gpio/*": deny}
    "mcp:token": {"*": deny}
    "mcp:uid:1000": {"sys/*": ask}
`), "m.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"desktop": "desk-token-0123456789", "phone": "phone-token-0123456789", "token": "old-single-token-0123"}
	if got := c.MCP.Serve.HostTokens(); !reflect.DeepEqual(got, want) {
		t.Errorf("host tokens %v, want %v", got, want)
	}
	out, _ := c.Redacted()
	for _, v := range want {
		if strings.Contains(string(out), v) {
			t.Errorf("token %q in the redacted output:\n%s", v, out)
		}
	}
	if !strings.Contains(string(out), "desktop: \"[redacted]\"") {
		t.Errorf("tokens not written:\n%s", out)
	}
	// A rule keyed on a name a host gives in its handshake holds nobody:
	// refused where it is written.
	_, err = Parse([]byte("mcp:\n  serve: {listen: \"127.0.0.1:8765\", tokens: {desktop: \"${DESK}\"}}\npolicy:\n  users:\n    \"mcp:Claude Desktop\": {\"*\": allow}\n"), "m.yaml", env)
	if err == nil || !strings.Contains(err.Error(), `m.yaml:5:5: policy.users: "mcp:Claude Desktop" is not a principal`) {
		t.Errorf("got %v", err)
	}
}
