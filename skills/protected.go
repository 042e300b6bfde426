package skills

import (
	"fmt"
	"path/filepath"

	"github.com/clawedge/clawedge/sandbox"
)

// CheckProtected refuses a skill whose tools would read or write one of
// protected (data_dir: the store, the device key that opens every secret,
// the other skills; the config's folder), or a folder holding one ("/",
// "/var"). Under a daemon that is not root, Landlock is all that keeps a
// child from its user's files: no owner's yes should open those.
func CheckProtected(s *Skill, protected []string) error {
	protected = protectedPaths(protected)
	for _, d := range s.Tools {
		for _, rw := range []struct {
			verb  string
			paths []string
		}{{"read", d.Read}, {"write", d.Write}} {
			for _, p := range rw.paths {
				for _, q := range protected {
					if q == "" {
						continue
					}
					if sandbox.Within(p, q) || sandbox.Within(q, p) {
						return fmt.Errorf("skill %s: tool %s would %s %s, which holds or lies in %s (clawedge's own data and config): refused", s.Name(), d.Name, rw.verb, p, q)
					}
				}
			}
		}
	}
	return nil
}

// protectedPaths makes each path absolute and real, as declared paths are compared.
func protectedPaths(paths []string) []string {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		out = append(out, p)
	}
	return out
}
