package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/clawedge/clawedge/grammar"
)

// MaxSpecFileBytes bounds a tools file: specs are small, and a huge file is a mistake.
const MaxSpecFileBytes = 4 << 20

// ReadSpecs reads a tools file: a JSON array of specs in the shape
// `clawedge tools --json` prints, or of MCP tool definitions (toolsfile_mcp.go).
// Unknown keys are errors (a typo such as "requird" would otherwise silently
// make a parameter optional), and every spec is checked as Register checks it.
// Errors name the spec by index and name and, for JSON syntax, the line and column.
func ReadSpecs(r io.Reader) ([]grammar.ToolSpec, error) {
	fts, err := ReadToolsFile(r)
	if err != nil {
		return nil, err
	}
	specs := make([]grammar.ToolSpec, len(fts))
	for i, ft := range fts {
		specs[i] = ft.Spec
	}
	return specs, nil
}

// ReadToolsFile is ReadSpecs, with what an MCP definition's schema became.
func ReadToolsFile(r io.Reader) ([]FileTool, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSpecFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSpecFileBytes {
		return nil, fmt.Errorf("tools file larger than %d bytes", MaxSpecFileBytes)
	}
	if isMCPShape(data) {
		return readMCPTools(data)
	}
	specs, err := readSpecShape(data)
	if err != nil {
		return nil, err
	}
	fts := make([]FileTool, len(specs))
	for i, s := range specs {
		fts[i] = FileTool{Spec: s}
	}
	return fts, nil
}

// readSpecShape reads a file of specs in clawedge's own shape.
func readSpecShape(data []byte) ([]grammar.ToolSpec, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var specs []grammar.ToolSpec
	if err := dec.Decode(&specs); err != nil {
		return nil, jsonError(data, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("tools file: more than one JSON value; want one array of specs")
	}
	if err := checkSpecs(specs); err != nil {
		return nil, err
	}
	return specs, nil
}

// jsonError places a decoding error at its line and column.
func jsonError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := lineCol(data, syn.Offset)
		return fmt.Errorf("tools file: line %d, column %d: %v", line, col, err)
	case errors.As(err, &typ):
		line, col := lineCol(data, typ.Offset)
		what := typ.Field
		if what == "" {
			what = "the file"
		}
		return fmt.Errorf("tools file: line %d, column %d: %s must be %s, found %s", line, col, what, typeName(typ.Type.String()), typ.Value)
	}
	return fmt.Errorf("tools file: %w", err)
}

// checkSpecs checks each spec as Register does, and that no name repeats.
func checkSpecs(specs []grammar.ToolSpec) error {
	seen := map[string]bool{}
	for i, s := range specs {
		if err := s.Check(); err != nil {
			return fmt.Errorf("tools file: spec %d: %w", i+1, err)
		}
		if seen[s.Name] {
			return fmt.Errorf("tools file: spec %d: tool %q listed twice", i+1, s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}

// typeName says what a Go type is in a tools file's terms.
func typeName(goType string) string {
	switch goType {
	case "[]grammar.ToolSpec":
		return "an array of tool specs"
	case "grammar.ToolSpec", "grammar.ArgSpec", "*grammar.ArgSpec":
		return "an object"
	case "[]grammar.ArgSpec":
		return "an array of parameters"
	}
	return goType
}
