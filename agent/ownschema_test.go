package agent

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/tools"
)

// searchTool stands for an MCP tool whose schema has a nested object: its spec
// is the one JSON parameter, with its own schema beside it.
type searchTool struct {
	mu  sync.Mutex
	got string
}

var searchSchema = json.RawMessage(`{"type":"object","properties":{"filter":{"type":"object","properties":{"tag":{"type":"string"}},"required":["tag"]}},"required":["filter"]}`)

func (s *searchTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "home/search", Doc: "search", InputSchema: searchSchema,
		Params: []grammar.ArgSpec{{Name: grammar.JSONParam, Type: grammar.TypeString, Required: true}}}
}

func (s *searchTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = a.String(grammar.JSONParam)
	return tools.Result{Text: "3 results"}, nil
}

// A remote model without a constraint sees an MCP tool's own nested schema and
// writes nested arguments; they reach the tool as its JSON parameter, and the
// call is audited.
func TestRemoteModelCallsAToolWithANestedSchema(t *testing.T) {
	e := newEnv(t, Options{},
		agenttest.Step{Calls: []llm.ToolCall{agenttest.Call("home/search", `{"filter": {"tag": "lights"}}`)}},
		agenttest.Step{Text: "Found 3."})
	tool := &searchTool{}
	if err := e.reg.Register(tool); err != nil {
		t.Fatal(err)
	}
	e.turn("find the lights")
	if tool.got != `{"filter":{"tag":"lights"}}` {
		t.Errorf("the tool got %q", tool.got)
	}
	reqs := e.p.Requests()
	var shown json.RawMessage
	for _, d := range reqs[0].Tools {
		if d.Name == "home/search" {
			shown = d.Params
		}
	}
	if string(shown) != string(searchSchema) {
		t.Errorf("the model was shown %s, want the tool's own schema", shown)
	}
	if es := e.audited(); len(es) == 0 || !strings.Contains(es[len(es)-1].Command, `home/search{json=`) {
		t.Errorf("audit: %+v", es)
	}
}
