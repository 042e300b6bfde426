package mcpclient

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzServerOutput feeds what a hostile server could send as a page of
// tools and as a tool result through what clawedge makes of them: tool specs
// (names, schemas) and the result text, bounded. Nothing may panic, and the
// text kept is never past its bound.
func FuzzServerOutput(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"get.weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}`))
	f.Add([]byte(`{"tools":[{"name":"n","inputSchema":{"type":"object","properties":{"w":{"type":"object","properties":{"x":{"anyOf":[{"type":"number"},{"type":"null"}]}}}}}}]}`))
	f.Add([]byte(`{"content":[{"type":"text","text":"hi"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"isError":true}`))
	f.Add([]byte(`{"content":[],"structuredContent":{"a":[1,2,{"b":null}]}}`))
	f.Add([]byte(`{"tools":[{"name":"$ref","inputSchema":{"$ref":"#","type":"object"}}]}`))
	s := &server{cfg: Server{Name: "fuzz", MaxOutput: 100}, m: &Manager{}}
	f.Fuzz(func(t *testing.T, b []byte) {
		var page mcp.ListToolsResult
		if json.Unmarshal(b, &page) == nil {
			for _, tl := range page.Tools {
				if tl == nil {
					continue
				}
				rt := newRemoteTool(s, "fuzz/"+ToolName(tl.Name), tl, newCompileBudget())
				if !strings.HasPrefix(rt.Spec().Name, "fuzz/") {
					t.Fatalf("spec name %q", rt.Spec().Name)
				}
			}
		}
		var res mcp.CallToolResult
		if json.Unmarshal(b, &res) == nil {
			text := capText(resultText(&res), s.cfg.MaxOutput)
			if len(text) > s.cfg.MaxOutput+100 || utf8.ValidString(resultText(&res)) && !utf8.ValidString(text) {
				t.Fatalf("%d bytes kept of a result, bound %d: %q", len(text), s.cfg.MaxOutput, text)
			}
		}
	})
}
