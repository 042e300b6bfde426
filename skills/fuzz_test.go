package skills

import (
	"strings"
	"testing"
)

// The front matter of a SKILL.md written by a stranger: never a panic, a
// hang or an unbounded allocation; what is accepted has a valid name and a
// description.
func FuzzParseSkillMD(f *testing.F) {
	f.Add([]byte("---\nname: ok\ndescription: fine\n---\nbody\n"))
	f.Add([]byte("---\nname: pdf\ndescription: >\n  folded\nmetadata: {version: 1.0, a: b}\nallowed-tools: Read Bash\n---\n"))
	f.Add([]byte("---\nname: a\ndescription: &x [*x, *x]\n---\n"))
	f.Add([]byte("---\r\nname: x\r\ndescription: y\r\n---"))
	f.Add([]byte("\ufeff---\nname: x\ndescription: !!binary aGk=\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := ParseSkillMD(data)
		if err != nil {
			return
		}
		if CheckName(m.Name) != nil || m.Description == "" {
			t.Fatalf("accepted %+v", m)
		}
	})
}

// tools.yaml written by a stranger: what is accepted runs a program inside
// the folder, with whole-argument parameters and clean absolute paths.
func FuzzParseTools(f *testing.F) {
	f.Add([]byte(goodTools))
	f.Add([]byte("tools:\n  - name: x\n    run: [scripts/x]\n"))
	f.Add([]byte("tools:\n  - {name: x, run: [a, \"{p}\"], params: [{name: p, type: string, enum: [a]}], read: [/a], write: [/b], network: true, timeout: 1s}\n"))
	f.Add([]byte("tools: [{name: x, run: ['../x']}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := ParseTools("fz", data)
		if err != nil {
			return
		}
		for _, d := range ds {
			if checkRelPath(d.Run[0]) != nil || d.Timeout <= 0 || d.Timeout > MaxTimeout {
				t.Fatalf("accepted %+v", d)
			}
			for _, a := range d.Run[1:] {
				if _, ok := placeholder(a); !ok && strings.ContainsAny(a, "{}") {
					t.Fatalf("accepted a partial placeholder %q", a)
				}
			}
			for _, p := range append(append([]string{}, d.Read...), d.Write...) {
				if !strings.HasPrefix(p, "/") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
					t.Fatalf("accepted the path %q", p)
				}
			}
		}
	})
}
