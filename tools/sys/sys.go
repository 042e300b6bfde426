// Package sys holds the tools about clawedge itself: sys/status and sys/help.
package sys

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/procfs"
	"github.com/clawedge/clawedge/tools"
)

// Fact is one line of sys/status: a name and a value that becomes a result field.
type Fact struct {
	Key   string
	Value grammar.Value
}

// Info is what sys/status reports besides the process's own numbers. Facts is
// called on every status request so that counts are current.
type Info struct {
	Version string
	Started time.Time
	Facts   func() []Fact
	// Audit returns the latest n audit entries, one line each; nil leaves
	// sys/audit out (there is no store).
	Audit func(n int) ([]string, error)
}

// Register adds sys/status, sys/help and, with a store, sys/audit to reg.
func Register(reg *tools.Registry, info Info) error {
	if err := reg.Register(statusTool{info}, helpTool{reg}); err != nil {
		return err
	}
	if info.Audit == nil {
		return nil
	}
	return reg.Register(auditTool{info.Audit})
}

// auditTool shows the audit trail from inside the daemon, which holds the store
// open: a second process cannot read it while the daemon runs.
type auditTool struct {
	tail func(n int) ([]string, error)
}

func (auditTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "sys/audit", Doc: "Show the latest audit entries: each call's intent and outcome.", Params: []grammar.ArgSpec{
		{Name: "n", Doc: "how many entries", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(200), Default: 10},
	}}
}

func (t auditTool) Run(ctx context.Context, args grammar.Args) (tools.Result, error) {
	lines, err := t.tail(int(args.Int("n")))
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: strings.Join(lines, "\n"), Fields: map[string]grammar.Value{"entries": grammar.IntValue(int64(len(lines)))}}, nil
}

type statusTool struct{ info Info }

// procStatus is where the process's memory is read (a test points it at a file).
var procStatus = "/proc/self/status"

func (statusTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "sys/status", Doc: "Report version, uptime, memory, board and store status."}
}

func (t statusTool) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	facts := []Fact{
		{"version", grammar.StringValue(t.info.Version)},
		{"uptime", grammar.StringValue(time.Since(t.info.Started).Round(time.Second).String())},
		{"heap_kb", grammar.IntValue(int64(ms.HeapAlloc / 1024))},
		{"goroutines", grammar.IntValue(int64(runtime.NumGoroutine()))},
	}
	// What the kernel counts against the process: all of it (VmRSS), and
	// the part that is its own, not shared file pages (RssAnon). Linux only.
	for _, k := range []struct{ key, fact string }{{"VmRSS", "rss_kb"}, {"RssAnon", "rss_anon_kb"}} {
		if n, err := procfs.KB(procStatus, k.key); err == nil {
			facts = append(facts, Fact{k.fact, grammar.IntValue(int64(n / 1024))})
		}
	}
	if t.info.Facts != nil {
		facts = append(facts, t.info.Facts()...)
	}
	res := tools.Result{Fields: map[string]grammar.Value{}}
	var lines []string
	for _, f := range facts {
		res.Fields[f.Key] = f.Value
		lines = append(lines, fmt.Sprintf("%s: %s", f.Key, show(f.Value)))
	}
	res.Text = strings.Join(lines, "\n")
	return res, nil
}

type helpTool struct{ reg *tools.Registry }

func (h helpTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "sys/help", Doc: "List the tools, or describe one tool's parameters.", Params: []grammar.ArgSpec{
		{Name: "tool", Doc: "a tool name such as gpio/write", Type: grammar.TypeString, MaxLen: 64},
	}}
}

func (h helpTool) Run(ctx context.Context, args grammar.Args) (tools.Result, error) {
	specs := h.reg.Specs()
	if name := args.String("tool"); name != "" {
		for _, s := range specs {
			if s.Name == name {
				return tools.Result{Text: Describe(s), Fields: map[string]grammar.Value{"tool": grammar.StringValue(name)}}, nil
			}
		}
		_, err := h.reg.Lookup(name)
		return tools.Result{}, err
	}
	var b strings.Builder
	names := make([]grammar.Value, 0, len(specs))
	width := 0
	for _, s := range specs {
		width = max(width, len(s.Name))
	}
	for _, s := range specs {
		fmt.Fprintf(&b, "@%-*s  %s\n", width, s.Name, s.Doc)
		names = append(names, grammar.StringValue(s.Name))
	}
	b.WriteString(`Run one: @gpio/write{pin="led";value=1}. Chain: @a{..}->@b{x=$prev.y}. In parallel: [@a{..},@b{..}]. Details: help TOOL.`)
	return tools.Result{Text: b.String(), Fields: map[string]grammar.Value{"tools": grammar.ArrayValue(names...)}}, nil
}

// Describe renders one spec for people: the doc, each parameter, an example call.
func Describe(s grammar.ToolSpec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "@%s — %s\n", s.Name, s.Doc)
	var example []string
	for _, p := range s.Params {
		req := "optional"
		if p.Required {
			req = "required"
		} else if d := p.DefaultText(); d != "" {
			req = "optional, default " + d
		}
		fmt.Fprintf(&b, "  %s: %s, %s", p.Name, typeText(p), req)
		if p.Doc != "" {
			fmt.Fprintf(&b, " — %s", p.Doc)
		}
		b.WriteString("\n")
		if p.Required {
			example = append(example, p.Name+"="+exampleValue(p))
		}
	}
	fmt.Fprintf(&b, "example: @%s{%s}", s.Name, strings.Join(example, ";"))
	return b.String()
}

func typeText(p grammar.ArgSpec) string {
	t := string(p.Type)
	if len(p.Enum) > 0 {
		t += " (" + strings.Join(p.Enum, "|") + ")"
	}
	if r := p.Range(); r != "" {
		t += " " + r
	}
	if p.MaxLen > 0 {
		t += fmt.Sprintf(" (at most %d characters)", p.MaxLen)
	}
	if p.MaxItems > 0 {
		t += fmt.Sprintf(" (%d..%d items)", p.MinItems, p.MaxItems)
	}
	if p.Items != nil {
		t += " of " + typeText(*p.Items)
	}
	return t
}

func exampleValue(p grammar.ArgSpec) string {
	switch p.Type {
	case grammar.TypeInteger, grammar.TypeNumber:
		if p.Min != nil {
			return grammar.FormatNumber(*p.Min)
		}
		return "0"
	case grammar.TypeBoolean:
		return "true"
	case grammar.TypeArray:
		if p.Items != nil {
			return "(" + exampleValue(*p.Items) + ")"
		}
		return "()"
	}
	if len(p.Enum) > 0 {
		return `"` + p.Enum[0] + `"`
	}
	return `"..."`
}

func show(v grammar.Value) string {
	switch v.Kind {
	case grammar.String:
		return v.Str
	case grammar.Int:
		return fmt.Sprint(v.Int)
	case grammar.Float:
		return fmt.Sprint(v.Float)
	case grammar.Bool:
		return fmt.Sprint(v.Bool)
	case grammar.Array:
		parts := make([]string, len(v.Items))
		for i, it := range v.Items {
			parts[i] = show(it)
		}
		return strings.Join(parts, ", ")
	}
	return ""
}
