package tools

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/clawedge/clawedge/grammar"
)

// Registry holds the tools of this process by name. Registration happens at
// start-up; lookups happen on every call, from many goroutines.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool
}

func NewRegistry() *Registry { return &Registry{tools: map[string]Tool{}} }

// Register adds tools; a name registered twice or a malformed spec is an error,
// because a spec is data the grammar is compiled from.
func (r *Registry) Register(ts ...Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range ts {
		spec := t.Spec()
		if err := spec.Check(); err != nil {
			return err
		}
		if _, dup := r.tools[spec.Name]; dup {
			return fmt.Errorf("tool %q registered twice", spec.Name)
		}
		r.tools[spec.Name] = t
	}
	return nil
}

// Lookup finds a tool; the error lists what exists in the same namespace so a typo is easy to fix.
func (r *Registry) Lookup(name string) (Tool, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.tools[name]; ok {
		return t, nil
	}
	ns, _, _ := strings.Cut(name, "/")
	var near []string
	for n := range r.tools {
		if strings.HasPrefix(n, ns+"/") {
			near = append(near, n)
		}
	}
	sort.Strings(near)
	if len(near) > 0 {
		return nil, fmt.Errorf("unknown tool %s (in %s: %s)", grammar.QuoteShort(name), ns, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("unknown tool %s (try sys/help)", grammar.QuoteShort(name))
}

// Specs returns every spec, sorted by name.
func (r *Registry) Specs() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	specs := make([]Spec, 0, len(r.tools))
	for _, t := range r.tools {
		specs = append(specs, t.Spec())
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].Name < specs[j].Name })
	return specs
}

// Namespaces returns the distinct namespaces ("gpio", "serial", "sys"), sorted:
// the command language accepts exactly these.
func (r *Registry) Namespaces() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for n := range r.tools {
		if ns, _, ok := strings.Cut(n, "/"); ok && !slices.Contains(out, ns) {
			out = append(out, ns)
		}
	}
	sort.Strings(out)
	return out
}

// Check reports a spec that could never be called or compiled: a bad name, a
// duplicate parameter, an enum on a non-string, min above max, an array without items.
func (s Spec) Check() error {
	if !validToolName(s.Name) {
		return fmt.Errorf("tool name %q: want ns/name of letters, digits, _ and -", s.Name)
	}
	if len(s.InputSchema) > 0 && (len(s.Params) != 1 || s.Params[0].Name != JSONParam || s.Params[0].Type != KindString) {
		return fmt.Errorf("tool %s: input_schema is for a tool whose one parameter is the string %q", s.Name, JSONParam)
	}
	if len(s.Shape) > 0 && (len(s.InputSchema) == 0 || !Nested(s.Shape)) {
		// A flat shape would be written as itself but validated as the json
		// parameter; flat parameters belong in params.
		return fmt.Errorf("tool %s: a shape is for a tool with an input_schema and nested parameters (objects or unions)", s.Name)
	}
	if err := checkParams(s.Params, Param.checkDecl); err != nil {
		return fmt.Errorf("tool %s: %w", s.Name, err)
	}
	if err := checkParams(s.Shape, Param.checkShape); err != nil {
		return fmt.Errorf("tool %s: shape: %w", s.Name, err)
	}
	return nil
}

// checkParams checks the names and declarations of an object's parameters.
func checkParams(ps []Param, check func(Param) error) error {
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Name == "" || seen[p.Name] {
			return fmt.Errorf("parameter name %q empty or repeated", p.Name)
		}
		seen[p.Name] = true
		if err := check(p); err != nil {
			return fmt.Errorf("parameter %q: %w", p.Name, err)
		}
	}
	return nil
}

// checkShape checks a parameter of a Shape: what checkDecl allows, and
// objects and unions of types (their depth is the compiler's to bound).
func (p Param) checkShape() error {
	switch p.Type {
	case KindObject:
		if p.Default != nil || len(p.AnyOf) > 0 {
			return fmt.Errorf("an object has properties only")
		}
		return checkParams(p.Props, Param.checkShape)
	case KindAnyOf:
		if len(p.AnyOf) == 0 || p.Default != nil || len(p.Props) > 0 {
			return fmt.Errorf("a union has choices only")
		}
		for i, c := range p.AnyOf {
			if c.Type == KindAnyOf {
				return fmt.Errorf("choice %d: unions of unions are not supported", i+1)
			}
			if err := c.checkShape(); err != nil {
				return fmt.Errorf("choice %d: %w", i+1, err)
			}
		}
		return nil
	case KindArray:
		if p.Items != nil && (p.Items.Type == KindObject || p.Items.Type == KindAnyOf) {
			flat := p
			flat.Items = &Param{Type: KindBoolean}
			if err := flat.checkDecl(); err != nil {
				return err
			}
			if err := p.Items.checkShape(); err != nil {
				return fmt.Errorf("items: %w", err)
			}
			return nil
		}
	}
	return p.checkDecl()
}

func (p Param) checkDecl() error {
	if len(p.Props) > 0 || len(p.AnyOf) > 0 {
		return fmt.Errorf("props and any_of are for objects and unions")
	}
	switch p.Type {
	case KindString, KindInteger, KindNumber, KindBoolean:
	case KindArray:
		if p.Items == nil {
			return fmt.Errorf("array without items")
		}
		if p.Items.Type == KindArray {
			return fmt.Errorf("arrays of arrays are not supported")
		}
		if err := p.Items.checkDecl(); err != nil {
			return fmt.Errorf("items: %w", err)
		}
	case KindObject, KindAnyOf:
		return fmt.Errorf("type %s is only for a tool's shape (an MCP input schema)", p.Type)
	default:
		return fmt.Errorf("unknown type %q", p.Type)
	}
	if len(p.Enum) > 0 && p.Type != KindString {
		return fmt.Errorf("enum is only for strings")
	}
	if (p.Min != nil || p.Max != nil) && p.Type != KindInteger && p.Type != KindNumber {
		return fmt.Errorf("min/max are only for numbers")
	}
	if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
		return fmt.Errorf("min %s above max %s", FormatNumber(*p.Min), FormatNumber(*p.Max))
	}
	if p.MinItems < 0 || p.MaxItems < 0 || (p.MinItems > 0 || p.MaxItems > 0) && p.Type != KindArray {
		return fmt.Errorf("min_items/max_items are only for arrays and must not be negative")
	}
	if p.MaxItems > 0 && p.MinItems > p.MaxItems {
		return fmt.Errorf("min_items %d above max_items %d", p.MinItems, p.MaxItems)
	}
	if p.MaxLen < 0 || (p.MaxLen > 0 && p.Type != KindString) {
		return fmt.Errorf("max_len is only for strings and must be positive")
	}
	if p.Default != nil {
		if p.Required {
			return fmt.Errorf("a required parameter cannot have a default")
		}
		if p.Type == KindArray {
			return fmt.Errorf("arrays cannot have a default")
		}
		if _, err := p.defaultValue(); err != nil {
			return err
		}
	}
	return nil
}

func validToolName(name string) bool {
	ns, n, hasNS := strings.Cut(name, "/")
	if !hasNS {
		return grammar.IsIdent(name)
	}
	return grammar.IsIdent(ns) && grammar.IsIdent(n)
}
