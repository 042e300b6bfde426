package skills

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// Describe is what a skill declares, for the owner to read before it is
// installed (and in `clawedge skill show`): who signed it, and each tool
// with its parameters, its program, and every right it asks for. The text
// comes from a stranger: the caller escapes it for the terminal.
func (p Plan) Describe() string {
	s := p.Skill
	var b strings.Builder
	fmt.Fprintf(&b, "skill %s", s.Name())
	if p.Source != "" {
		fmt.Fprintf(&b, " from %s", p.Source)
	}
	fmt.Fprintf(&b, "\n  %s\n", strings.Join(strings.Fields(s.Meta.Description), " "))
	if p.SignedBy != "" {
		fmt.Fprintf(&b, "  signed by %s (trusted)\n", p.SignedBy)
	} else {
		b.WriteString("  UNSIGNED (or signed by a key skills.trust does not list): nobody you trust vouches for these files\n")
	}
	if s.Meta.License != "" {
		fmt.Fprintf(&b, "  license: %s\n", s.Meta.License)
	}
	if s.Meta.Compatibility != "" {
		fmt.Fprintf(&b, "  compatibility: %s\n", s.Meta.Compatibility)
	}
	if len(s.Meta.AllowedTools) > 0 {
		// The format lets a skill pre-approve tools; here only the policy
		// approves, so the list is shown and grants nothing.
		fmt.Fprintf(&b, "  allowed-tools (grants nothing here; the policy decides): %s\n", strings.Join(s.Meta.AllowedTools, " "))
	}
	var size int64
	for _, f := range s.Tree.Files {
		size += f.Size
	}
	fmt.Fprintf(&b, "  %d files, %d bytes\n", len(s.Tree.Files), size)
	if len(s.Tools) == 0 {
		b.WriteString("  no tools: instructions only\n")
	}
	for _, d := range s.Tools {
		fmt.Fprintf(&b, "  tool %s/%s: %s\n", s.Name(), d.Name, d.Doc)
		for _, a := range d.Params {
			fmt.Fprintf(&b, "    param %s\n", describeParam(a))
		}
		fmt.Fprintf(&b, "    runs    %s (never through a shell)\n", strings.Join(quoteAll(d.Run), " "))
		if l, ok := s.Launches[d.Name]; ok {
			fmt.Fprintf(&b, "    starts  %s\n", l.Describe())
		} else if s.Dir != "" { // loaded: how it would start now
			l, err := programLaunch(filepath.Join(s.Dir, filepath.FromSlash(d.Run[0])), d.Read)
			if err != nil {
				fmt.Fprintf(&b, "    starts  CANNOT START on this board: %v\n", err)
			} else {
				fmt.Fprintf(&b, "    starts  %s\n", l.Describe())
			}
		}
		fmt.Fprintf(&b, "    reads   its own folder%s\n", listOr(d.Read, ""))
		fmt.Fprintf(&b, "    writes  %s\n", listOr(d.Write, "nothing"))
		net := "none (no sockets)"
		if d.Network {
			net = "YES: it may open network connections"
		}
		fmt.Fprintf(&b, "    network %s\n", net)
		fmt.Fprintf(&b, "    timeout %s\n", d.Timeout)
	}
	for _, n := range p.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	return strings.TrimRight(b.String(), "\n")
}

func describeParam(a grammar.ArgSpec) string {
	s := a.Name + " " + string(a.Type)
	if a.Required {
		s += ", required"
	}
	if len(a.Enum) > 0 {
		s += ", one of " + strings.Join(a.Enum, " | ")
	}
	if a.Doc != "" {
		s += ": " + a.Doc
	}
	return s
}

func listOr(l []string, none string) string {
	if len(l) == 0 {
		return none
	}
	if none == "" {
		return ", " + strings.Join(l, ", ")
	}
	return strings.Join(l, ", ")
}

func quoteAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		if s == "" || strings.ContainsAny(s, " \t\"'") {
			s = fmt.Sprintf("%q", s)
		}
		out[i] = s
	}
	return out
}
