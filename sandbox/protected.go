package sandbox

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CheckProtected refuses a grant that holds or lies in one of protected:
// clawedge's own data (the store, the device key that opens every secret)
// and the config's folder (the config and clawedge.env). A program that is
// not ours reaches those through no door; under a daemon that is not root,
// Landlock is all that keeps it from its user's files, so no grant may open
// them, whoever wrote it. Grants are compared by their real paths.
func CheckProtected(what string, grants, protected []string) error {
	for _, g := range grants {
		rg := realPath(g)
		for _, p := range protected {
			if p == "" {
				continue
			}
			rp := realPath(p)
			if Within(rg, rp) || Within(rp, rg) {
				return fmt.Errorf("%s %s holds or lies in %s, clawedge's own data or config: no program that is not clawedge's may reach it", what, g, p)
			}
		}
	}
	return nil
}

// Within reports whether p is dir or beneath it.
func Within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// realPath is p absolute, through its symlinks where it exists.
func realPath(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		p = real
	}
	return p
}
