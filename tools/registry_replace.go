package tools

import (
	"fmt"
	"strings"
)

// ReplaceNamespace makes ts the tools of namespace ns, removing the ones it had:
// an MCP server's tool list changes while clawedge runs (list_changed, a
// restart), and the registry must never offer a tool the server no longer has.
// Every tool of ts must be in ns; nothing changes on an error.
func (r *Registry) ReplaceNamespace(ns string, ts []Tool) error {
	return r.replacePrefix(ns+"/", ts)
}

// ReplaceBoard makes ts the tools of the paired board named board (each
// named board.ns/tool), removing the ones it had: its tools change as the
// board's do, and a board unpaired takes its tools with it (ts empty).
func (r *Registry) ReplaceBoard(board string, ts []Tool) error {
	return r.replacePrefix(board+".", ts)
}

func (r *Registry) replacePrefix(prefix string, ts []Tool) error {
	fresh := map[string]Tool{}
	for _, t := range ts {
		spec := t.Spec()
		if err := spec.Check(); err != nil {
			return err
		}
		if !strings.HasPrefix(spec.Name, prefix) {
			return fmt.Errorf("tool %q is not in %s", spec.Name, strings.TrimSuffix(prefix, "/"))
		}
		if _, dup := fresh[spec.Name]; dup {
			return fmt.Errorf("tool %q registered twice", spec.Name)
		}
		fresh[spec.Name] = t
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for name := range r.tools {
		if strings.HasPrefix(name, prefix) {
			delete(r.tools, name)
		}
	}
	for name, t := range fresh {
		r.tools[name] = t
	}
	return nil
}
