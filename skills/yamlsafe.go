package skills

import (
	"fmt"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// decodeYAML decodes a small YAML document written by a stranger into
// generic values. Anchors and aliases are refused first: a few bytes of
// aliases can expand into gigabytes (a "billion laughs"), and a skill has no
// use for them.
func decodeYAML(what string, data []byte) (map[string]any, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", what, firstLine(err.Error()))
	}
	var found ast.Node
	for _, doc := range f.Docs {
		ast.Walk(visitor(func(n ast.Node) bool {
			switch n.(type) {
			case *ast.AnchorNode, *ast.AliasNode:
				found = n
			}
			return found == nil
		}), doc)
	}
	if found != nil {
		return nil, fmt.Errorf("%s: line %d: anchors and aliases (&name, *name) are not accepted", what, found.GetToken().Position.Line)
	}
	if len(f.Docs) > 1 {
		return nil, fmt.Errorf("%s: more than one YAML document", what)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %s", what, firstLine(err.Error()))
	}
	return m, nil
}

type visitor func(ast.Node) bool

func (v visitor) Visit(n ast.Node) ast.Visitor {
	if n == nil || !v(n) {
		return nil
	}
	return v
}

func firstLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return s[:i]
		}
	}
	return s
}
