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
func (r *Registry) Specs() []grammar.ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	specs := make([]grammar.ToolSpec, 0, len(r.tools))
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
