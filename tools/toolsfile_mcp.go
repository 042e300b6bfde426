package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// FileTool is one tool of a tools file. An MCP definition whose input schema
// the spec type cannot express exactly has Degraded set (why) and a Spec with
// the one JSONParam, validated against Schema after generation. Warnings say
// what of the schema was left out without degrading it (a default that
// contradicts its schema, enum values or an optional property no value of
// which is valid) and the name the tool was given if the definition's is not
// one of the command language. Refused says why the tool cannot be offered at all
// (ReadToolsFileEach; ReadToolsFile refuses the file instead).
type FileTool struct {
	Spec     grammar.ToolSpec
	Degraded string
	Warnings []string
	Schema   map[string]any
	Refused  string
}

// mcpToolKeys are the keys of an MCP tool definition (the spec's Tool object;
// execution, 2025-11-25, is what the TypeScript reference servers send).
var mcpToolKeys = []string{"name", "description", "inputSchema", "title", "annotations", "outputSchema", "execution", "_meta", "icons"}

// isMCPShape reports whether a tools file holds MCP tool definitions
// ([{"name", "description", "inputSchema"}], as tools/list returns them)
// rather than clawedge specs: its first element has an inputSchema.
func isMCPShape(data []byte) bool {
	var first []map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if dec.Decode(&first) != nil || len(first) == 0 {
		return false
	}
	_, ok := first[0]["inputSchema"]
	return ok
}

// readMCPTools reads MCP tool definitions; names become plain names (dots to
// _). A definition that cannot be read or checked is a FileTool with Refused
// set (its name as written, or "#N"); only a file that is not an array of
// objects is an error.
func readMCPTools(data []byte) ([]FileTool, error) {
	var defs []map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&defs); err != nil {
		return nil, jsonError(data, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("tools file: more than one JSON value; want one array of tool definitions")
	}
	out := make([]FileTool, 0, len(defs))
	for i, d := range defs {
		ft, err := mcpTool(d)
		if err != nil {
			var name string
			if json.Unmarshal(d["name"], &name) != nil || name == "" {
				name = fmt.Sprintf("#%d", i+1)
			}
			ft = FileTool{Spec: grammar.ToolSpec{Name: name}, Refused: fmt.Sprintf("tool %d: %v", i+1, err)}
		}
		out = append(out, ft)
	}
	refuseEach(out)
	return out, nil
}

func mcpTool(d map[string]json.RawMessage) (FileTool, error) {
	var unknown []string
	for k := range d {
		if !slices.Contains(mcpToolKeys, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return FileTool{}, fmt.Errorf("unknown key %q (an MCP tool has %s)", unknown[0], strings.Join(mcpToolKeys, ", "))
	}
	var name, desc string
	var schema map[string]any
	if err := json.Unmarshal(d["name"], &name); err != nil || name == "" {
		return FileTool{}, fmt.Errorf("name must be a non-empty string")
	}
	if raw, ok := d["description"]; ok {
		if err := json.Unmarshal(raw, &desc); err != nil {
			return FileTool{}, fmt.Errorf("%s: description must be a string", name)
		}
	}
	if err := json.Unmarshal(d["inputSchema"], &schema); err != nil || schema == nil {
		return FileTool{}, fmt.Errorf("%s: inputSchema must be a JSON Schema object", name)
	}
	plain := PlainName(name)
	if ns, n, ok := strings.Cut(name, "/"); ok {
		plain = PlainName(ns) + "/" + PlainName(n)
	}
	ft := SpecFromSchema(plain, desc, schema)
	if plain != name {
		ft.Warnings = append([]string{fmt.Sprintf("named %s: %q is not a name of the command language", plain, name)}, ft.Warnings...)
	}
	return ft, nil
}

// SpecFromSchema is the spec of a tool named name (already a plain name) with
// an MCP description and input schema: exact when the spec type expresses the
// schema (flat in Params, or nested in Shape with the one JSONParam), else
// Degraded with one JSONParam (the schema is in its doc).
func SpecFromSchema(name, desc string, schema map[string]any) FileTool {
	ft := FileTool{Spec: grammar.ToolSpec{Name: name, Doc: OneLine(desc, 400)}, Schema: schema}
	var r schemaReader
	params, why := r.params(schema)
	if why == "" {
		ft.Warnings = r.warnings
	}
	if why == "" && !grammar.NeedsShape(params) {
		ft.Spec.Params = params
		return ft
	}
	ft = ft.AsJSONParam(why)
	if why == "" {
		// A shape is exact only if its automaton stays within the bound.
		ft.Spec.Shape = params
		_, err := grammar.Compile(grammar.Spec{Form: grammar.FormQwen, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{ft.Spec}})
		if err == nil {
			return ft
		}
		ft.Spec.Shape, why = nil, err.Error()
	}
	ft.Degraded = why
	return ft
}

// AsJSONParam is the tool with one JSONParam, the arguments as one JSON
// object checked against its schema (in the parameter's doc): what a tool
// whose schema the spec type cannot express, or that costs too much to
// constrain, degrades to. why says which ("" keeps a Shape to add).
func (ft FileTool) AsJSONParam(why string) FileTool {
	b, _ := json.Marshal(ft.Schema)
	ft.Spec.InputSchema = b
	ft.Spec.Shape = nil
	ft.Spec.Params = []grammar.ArgSpec{{Name: grammar.JSONParam, Type: grammar.TypeString, Required: true,
		Doc: "the arguments as one JSON object, checked against the tool's schema: " + OneLine(string(b), 600)}}
	ft.Degraded = why
	return ft
}
