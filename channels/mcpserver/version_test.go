package mcpserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A request naming a protocol version no SDK speaks is refused, whichever
// handler it would go to; one the server speaks is answered.
func TestHTTPRefusesUnknownProtocolVersions(t *testing.T) {
	const token = "s3cret-token-0123456789"
	url := serveHTTP(t, newBoard(t, nil, time.Minute), map[string]string{"token": token}, io.Discard)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"%s","io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, c := range []struct {
		version string
		ok      bool
	}{
		{"2026-07-28", true},
		{"bogus", false},
		{"1999-01-01", false},
		{"2099-01-01", false},
	} {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(strings.Replace(list, "%s", c.version, 1)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", c.version)
		req.Header.Set("Mcp-Method", "tools/list")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answered := resp.StatusCode == http.StatusOK && strings.Contains(string(b), `"tools"`)
		if answered != c.ok {
			t.Errorf("version %q: HTTP %d %.300s", c.version, resp.StatusCode, b)
		}
	}
}

// post sends one JSON-RPC message to url in session (none: ""), and returns
// the status and the session named in the answer.
func post(t *testing.T, url, token, session, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
}

// Hosts that open sessions and never close them leave at most MaxSessions:
// past it the oldest is closed (the SDK tells of each session's handshake on
// its own goroutine, so which one is oldest here is the server's order).
func TestHTTPBoundsSessions(t *testing.T) {
	const token = "s3cret-token-0123456789"
	url := serveHTTP(t, newBoard(t, nil, time.Minute), map[string]string{"token": token}, io.Discard)
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	var sessions []string
	for range MaxSessions + 1 {
		code, id := post(t, url, token, "", init)
		if code != http.StatusOK || id == "" {
			t.Fatalf("initialize: HTTP %d, session %q", code, id)
		}
		post(t, url, token, id, initialized)
		sessions = append(sessions, id)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		open := 0
		for _, id := range sessions {
			if code, _ := post(t, url, token, id, list); code == http.StatusOK {
				open++
			}
		}
		if open == MaxSessions {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sessions open, want %d", open, len(sessions), MaxSessions)
		}
	}
}
