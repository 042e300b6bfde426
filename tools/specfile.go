package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

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
// A tool that cannot be offered makes the whole file an error.
func ReadToolsFile(r io.Reader) ([]FileTool, error) {
	fts, err := ReadToolsFileEach(r)
	if err != nil {
		return nil, err
	}
	for _, ft := range fts {
		if ft.Refused != "" {
			return nil, errors.New("tools file: " + ft.Refused)
		}
	}
	return fts, nil
}

// ReadToolsFileEach reads a tools file as ReadToolsFile does, but a tool that
// cannot be offered (a bad name, a spec that fails its check, a name listed
// twice, a definition that cannot be read) is returned with Refused set and
// the rest are read: what `clawedge tools check` reports tool by tool. Only a
// file that is not a JSON array of objects is an error.
func ReadToolsFileEach(r io.Reader) ([]FileTool, error) {
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
	return readSpecShape(data)
}

// readSpecShape reads a file of specs in clawedge's own shape, each spec on
// its own (an unknown key or a value of the wrong type refuses that spec
// only, placed at its line and column in the file).
func readSpecShape(data []byte) ([]FileTool, error) {
	var whole []json.RawMessage
	first := json.NewDecoder(bytes.NewReader(data))
	if err := first.Decode(&whole); err != nil {
		var specs []grammar.ToolSpec // for the error's wording
		if err2 := json.NewDecoder(bytes.NewReader(data)).Decode(&specs); err2 != nil {
			err = err2
		}
		return nil, jsonError(data, err)
	}
	if first.More() {
		return nil, fmt.Errorf("tools file: more than one JSON value; want one array of specs")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.Token() // [
	var fts []FileTool
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(data, err)
		}
		start := dec.InputOffset() - int64(len(raw))
		d := json.NewDecoder(bytes.NewReader(raw))
		d.DisallowUnknownFields()
		var s grammar.ToolSpec
		if err := d.Decode(&s); err != nil {
			var named struct{ Name string }
			json.Unmarshal(raw, &named)
			if named.Name == "" {
				named.Name = fmt.Sprintf("#%d", i+1)
			}
			msg := jsonError(data, shiftOffset(err, start)).Error()
			fts = append(fts, FileTool{Spec: grammar.ToolSpec{Name: named.Name}, Refused: fmt.Sprintf("spec %d: %s", i+1, strings.TrimPrefix(msg, "tools file: "))})
			continue
		}
		fts = append(fts, FileTool{Spec: s})
	}
	refuseEach(fts)
	return fts, nil
}

// shiftOffset places a decoding error of one element at its offset in the file.
func shiftOffset(err error, start int64) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		c := *syn
		c.Offset += start
		return &c
	case errors.As(err, &typ):
		c := *typ
		c.Offset += start
		return &c
	}
	return err
}

// refuseEach checks each tool not yet refused as Register does, and that no
// name repeats (the second is refused).
func refuseEach(fts []FileTool) {
	seen := map[string]bool{}
	for i := range fts {
		ft := &fts[i]
		if ft.Refused != "" {
			continue
		}
		if err := ft.Spec.Check(); err != nil {
			ft.Refused = fmt.Sprintf("spec %d: %v", i+1, err)
			continue
		}
		if seen[ft.Spec.Name] {
			ft.Refused = fmt.Sprintf("spec %d: tool %q listed twice", i+1, ft.Spec.Name)
			continue
		}
		seen[ft.Spec.Name] = true
	}
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
