package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// nestedArgs are arguments for the nested tool of testdata/mcp-nested-server.cjs:
// an object, an array of objects (one with an array of strings, numbers with
// a fraction and an exponent), a null.
const nestedArgs = `{"site": {"name": "garage", "floor": 1}, "readings": [{"sensor": "temp", "value": 21.5, "tags": ["north", "ceiling"]}, {"sensor": "hum", "value": 4.5e-1}], "note": null}`

// TestAgentCallsNestedMCPTool: a remote model (the fake OpenAI server, real wire
// format) calls an MCP tool with a nested schema, through the daemon's agent,
// to a stdio MCP server written with the TypeScript SDK. The model is offered
// the allowed tool with its own schema and not the other one; the nested
// arguments reach the server intact; the call is audited; the result goes back
// to the model and its answer to the person. Then the model calls the tool
// the policy does not allow, by every spelling it might use: none reaches the
// server, and each is answered with an error the model sees.
func TestAgentCallsNestedMCPTool(t *testing.T) {
	nm := openToAll(t, mcpNodeModules(t))
	callsDir := writableByAll(t) // the server writes the calls it got there
	calls := filepath.Join(callsDir, "calls.jsonl")
	server, _ := filepath.Abs(filepath.Join("testdata", "mcp-nested-server.cjs"))
	server = filepath.Join(openToAll(t, filepath.Dir(server)), filepath.Base(server))
	srv := openaitest.New(t)
	denied := []string{"nested/wipe", "Nested/wipe", "nested/WIPE", "nested.wipe", "nested_wipe", "wipe", "nested//wipe", "nested/wipe ", "/nested/wipe"}
	var spellings []openaitest.Call
	for _, name := range denied {
		spellings = append(spellings, openaitest.Call{Name: name, Args: `{}`})
	}
	srv.Push(openaitest.ToolCall("nested/store_readings", nestedArgs), openaitest.Text("Stored ", "two readings."),
		openaitest.Reply{Calls: spellings}, openaitest.Text("I cannot wipe them."))
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
policy:
  tools: {"nested/store_readings": allow}
mcp:
  servers:
    nested: {command: ["node", "`+server+`", "`+calls+`"], env: {NODE_PATH: "`+nm+`"}, read: ["`+nm+`", "`+filepath.Dir(server)+`"], write: ["`+callsDir+`"], timeout: 20s}
`+remoteConfig(srv, ""))
	runInProcess(t, cfgPath, "warn")
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	if out := waitMCPReady(t, cfgPath, "nested"); !strings.Contains(out, "nested/store_readings") {
		t.Fatalf("tools:\n%s", out)
	}

	out := runCLI(t, 0, "store the readings\nnow wipe them all\n", "chat", "--config", cfgPath)
	if !strings.Contains(out, "Stored two readings.") || !strings.Contains(out, "I cannot wipe them.") {
		t.Fatalf("chat said %q", out)
	}

	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests to the model, want 4", len(reqs))
	}
	offered := strings.Join(reqs[0].ToolNames(), " ")
	if !strings.Contains(offered, llm.WireName("nested/store_readings")) || strings.Contains(offered, "wipe") {
		t.Errorf("tools offered to the model: %s", offered)
	}
	for _, tl := range reqs[0].Body.Tools {
		if tl.Function.Name == llm.WireName("nested/store_readings") && !strings.Contains(string(tl.Function.Parameters), `"readings"`) {
			t.Errorf("the nested tool offered without its schema: %s", tl.Function.Parameters)
		}
	}

	// The server received exactly the one allowed call, arguments intact.
	got := readCalls(t, calls)
	if len(got) != 1 || got[0].Name != "store_readings" {
		t.Fatalf("the MCP server received %+v", got)
	}
	var want any
	json.Unmarshal([]byte(nestedArgs), &want)
	if !reflect.DeepEqual(got[0].Arguments, want) {
		t.Errorf("arguments arrived as %v, want %v", got[0].Arguments, want)
	}
	// Its result went back to the model.
	var echoed any
	if res := toolResults(reqs[1]); len(res) != 1 || !strings.HasPrefix(res[0], "ok: stored ") ||
		json.Unmarshal([]byte(strings.TrimPrefix(res[0], "ok: stored ")), &echoed) != nil || !reflect.DeepEqual(echoed, want) {
		t.Errorf("tool result sent to the model: %q", res)
	}
	// Every denied spelling was answered with an error, none ran.
	res := toolResults(reqs[3])
	if len(res) != len(denied) {
		t.Errorf("%d tool results for %d denied calls: %q", len(res), len(denied), res)
	}
	for i, r := range res {
		if !strings.HasPrefix(r, "error: ") || strings.Contains(r, "stored") {
			t.Errorf("denied call %q answered %q", denied[min(i, len(denied)-1)], r)
		}
	}

	audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
	var stored []string
	for _, line := range strings.Split(audit, "\n") {
		if strings.Contains(line, "@nested/store_readings") {
			stored = append(stored, line)
		}
	}
	if len(stored) != 1 || !strings.Contains(stored[0], "control/uid:") || !strings.Contains(stored[0], `\"value\":4.5e-1}],\"note\":null}"} -> ok: stored {`) {
		t.Errorf("want one audited nested/store_readings call with its arguments that ran ok:\n%s", audit)
	}
	if strings.Contains(audit, "wipe") {
		t.Errorf("a wipe reached the call path:\n%s", audit)
	}
}

// waitMCPReady polls `clawedge tools` until the MCP server is ready (it starts
// in the background) and returns what it printed.
func waitMCPReady(t *testing.T, cfgPath, server string) string {
	t.Helper()
	ready := "MCP server " + server + ": ready"
	var out string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		out = runCLI(t, 0, "", "tools", "--config", cfgPath)
		if strings.Contains(out, ready) || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(out, ready) {
		t.Fatalf("%s not ready; tools:\n%s", server, out)
	}
	return out
}

type mcpCall struct {
	Name      string `json:"name"`
	Arguments any    `json:"arguments"`
}

// readCalls reads the calls log of testdata/mcp-nested-server.cjs.
func readCalls(t *testing.T, path string) []mcpCall {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []mcpCall
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c mcpCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("calls log: %v", err)
		}
		out = append(out, c)
	}
	return out
}

// toolResults are the contents of the tool messages that answer a request's
// last assistant message.
func toolResults(r openaitest.Request) []string {
	var out []string
	for _, m := range r.Body.Messages {
		switch {
		case m.Role == "assistant":
			out = nil
		case m.Role == "tool" && m.Content != nil:
			out = append(out, *m.Content)
		}
	}
	return out
}
