package skills

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
)

// ToolsFile is the name of a skill's script-tool declarations, beside SKILL.md.
const ToolsFile = "tools.yaml"

// Bounds of one declared tool.
const (
	DefaultTimeout = 5 * time.Second
	MaxTimeout     = 10 * time.Minute
	maxRunArgs     = 64
	maxPaths       = 32
)

// ToolDecl is one script tool as tools.yaml declares it. Its rights are
// exactly Read, Write and Network (and reading its own skill folder): the
// sandbox grants nothing else, whatever exec.mode says.
type ToolDecl struct {
	Name    string            // the tool is SKILL/Name
	Doc     string            //
	Params  []grammar.ArgSpec // the tools-file spec shape (`clawedge tools --json`)
	Run     []string          // argv; Run[0] is a file of the skill, "{param}" items are replaced
	Read    []string          // absolute paths it may read
	Write   []string          // absolute paths it may write
	Network bool              //
	Timeout time.Duration     // wall clock; the whole process group is killed after it
}

// Spec is the tool's spec in the namespace of skill.
func (d ToolDecl) Spec(skill string) grammar.ToolSpec {
	return grammar.ToolSpec{Name: skill + "/" + d.Name, Doc: d.Doc, Params: d.Params}
}

// ParseTools reads tools.yaml for the skill named skill. Keys it does not
// know are ignored (other runtimes may add their own; none of them can grant
// a right, since rights are only what read, write and network say); the keys
// it knows must mean what they say, so a parameter is checked as strictly as
// in a tools file (an unknown key there, such as "requird", is an error).
func ParseTools(skill string, data []byte) ([]ToolDecl, error) {
	if len(data) > MaxToolsYAML {
		return nil, fmt.Errorf("%s: %d bytes, more than %d", ToolsFile, len(data), MaxToolsYAML)
	}
	raw, err := decodeYAML(ToolsFile, data)
	if err != nil {
		return nil, err
	}
	list, ok := raw["tools"].([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a list under \"tools:\"", ToolsFile)
	}
	if len(list) > MaxTools {
		return nil, fmt.Errorf("%s: %d tools, more than %d", ToolsFile, len(list), MaxTools)
	}
	var decls []ToolDecl
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: tools[%d] must be a mapping", ToolsFile, i)
		}
		d, err := parseTool(skill, m)
		where := fmt.Sprintf("tools[%d]", i)
		if d.Name != "" {
			where += " (" + d.Name + ")"
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", ToolsFile, where, err)
		}
		if slices.ContainsFunc(decls, func(o ToolDecl) bool { return o.Name == d.Name }) {
			return nil, fmt.Errorf("%s: %s: the name is declared twice", ToolsFile, where)
		}
		decls = append(decls, d)
	}
	return decls, nil
}

func parseTool(skill string, m map[string]any) (ToolDecl, error) {
	var d ToolDecl
	var err error
	if d.Name, err = stringKey(m, "name", true); err != nil {
		return d, err
	}
	if d.Doc, err = stringKey(m, "doc", false); err != nil {
		return d, err
	}
	if v, ok := m["params"]; ok && v != nil {
		// The same decoding as a tools file's params: through JSON, strict.
		b, err := json.Marshal(v)
		if err != nil {
			return d, fmt.Errorf("params: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d.Params); err != nil {
			return d, fmt.Errorf("params: %v", err)
		}
	}
	if err := d.Spec(skill).Check(); err != nil {
		return d, err
	}
	for _, p := range d.Params {
		switch p.Type {
		case grammar.TypeString, grammar.TypeInteger, grammar.TypeNumber, grammar.TypeBoolean:
		default:
			return d, fmt.Errorf("parameter %s: type %s cannot be one argument of a program (string, integer, number or boolean)", p.Name, p.Type)
		}
	}
	if d.Run, err = stringList(m, "run", maxRunArgs); err != nil {
		return d, err
	}
	if err := checkRun(d.Run, d.Params); err != nil {
		return d, err
	}
	if d.Read, err = pathList(m, "read"); err != nil {
		return d, err
	}
	if d.Write, err = pathList(m, "write"); err != nil {
		return d, err
	}
	if v, ok := m["network"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return d, fmt.Errorf("network must be true or false, found %s", kind(v))
		}
		d.Network = b
	}
	d.Timeout = DefaultTimeout
	if v, ok := m["timeout"]; ok && v != nil {
		s, ok := v.(string)
		t, err := time.ParseDuration(s)
		if !ok || err != nil || t <= 0 || t > MaxTimeout {
			return d, fmt.Errorf("timeout %v: want a duration such as 5s, at most %s", v, MaxTimeout)
		}
		d.Timeout = t
	}
	return d, nil
}

// checkRun checks an argv: the program is a clean path inside the skill
// folder, and each "{name}" is a whole item naming a declared parameter
// (a value is always exactly one argument, never split or joined), and every
// parameter is used.
func checkRun(run []string, params []grammar.ArgSpec) error {
	if len(run) == 0 {
		return fmt.Errorf("run is missing: the program, a file of the skill such as scripts/read.sh, then its arguments")
	}
	if err := checkRelPath(run[0]); err != nil {
		return fmt.Errorf("run[0]: %w", err)
	}
	used := map[string]bool{}
	for i, a := range run[1:] {
		name, isParam := placeholder(a)
		switch {
		case isParam && !slices.ContainsFunc(params, func(p grammar.ArgSpec) bool { return p.Name == name }):
			return fmt.Errorf("run[%d] %q names no parameter", i+1, a)
		case isParam:
			used[name] = true
		case strings.ContainsAny(a, "{}"):
			return fmt.Errorf("run[%d] %q: a parameter is a whole argument, \"{name}\", never part of one", i+1, a)
		}
	}
	for _, p := range params {
		if !used[p.Name] {
			return fmt.Errorf("parameter %s is not used in run", p.Name)
		}
	}
	return nil
}

// placeholder reports whether a is "{name}".
func placeholder(a string) (string, bool) {
	if len(a) > 2 && a[0] == '{' && a[len(a)-1] == '}' && !strings.ContainsAny(a[1:len(a)-1], "{}") {
		return a[1 : len(a)-1], true
	}
	return "", false
}

// checkRelPath accepts a clean relative path that stays in the folder.
func checkRelPath(p string) error {
	if p == "" || path.IsAbs(p) || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("%q must be a clean path inside the skill folder, such as scripts/read.sh", p)
	}
	return nil
}

func stringKey(m map[string]any, key string, required bool) (string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("%s is missing", key)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s must be a string, found %s", key, kind(v))
	}
	return s, nil
}

func stringList(m map[string]any, key string, max int) ([]string, error) {
	v, ok := m[key]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a list, found %s", key, kind(v))
	}
	if len(l) > max {
		return nil, fmt.Errorf("%s has %d items, more than %d", key, len(l), max)
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("%s[%d] must be a string, found %s", key, i, kind(e))
		}
		if strings.ContainsRune(s, 0) || len(s) > 4096 {
			return nil, fmt.Errorf("%s[%d]: a NUL byte or more than 4096 bytes", key, i)
		}
		out[i] = s
	}
	return out, nil
}

// pathList reads read or write: absolute, clean paths (the sandbox refuses
// symlinks among them when the tool runs).
func pathList(m map[string]any, key string) ([]string, error) {
	l, err := stringList(m, key, maxPaths)
	if err != nil {
		return nil, err
	}
	for i, p := range l {
		if !filepath.IsAbs(p) || filepath.Clean(p) != p {
			return nil, fmt.Errorf("%s[%d] %q: want an absolute, clean path (no \"..\", no trailing \"/\")", key, i, p)
		}
	}
	return l, nil
}
