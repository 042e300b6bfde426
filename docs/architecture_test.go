// Package docs holds no code: its one test keeps the layer table of
// ARCHITECTURE.md true, since a table nothing checks drifts.
package docs

import (
	"bufio"
	"errors"
	"fmt"
	"go/build"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/clawedge/clawedge"

// layerRow is one row of the table: the packages it names and the two
// columns the test checks, each a list of patterns (see match).
type layerRow struct {
	line     int
	names    []string // the package cell
	measured []string // "imports (measured)"
	may      []string // "may import"; nil with anything set
	anything bool     // "everything"
}

// TestArchitectureLayers reads the table of docs/ARCHITECTURE.md and checks
// it against the imports of every package of the module (non-test files, the
// static build and the llamacpp one): every package has a row, nothing
// imports outside its "may import" cell, and the "imports (measured)" cell
// says what the row imports today.
func TestArchitectureLayers(t *testing.T) {
	rows, err := readLayerTable("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := moduleImports("..")
	if err != nil {
		t.Fatal(err)
	}
	all := slices.Sorted(maps.Keys(pkgs))

	// Every pattern names something, so a renamed package cannot leave a
	// row that silently matches nothing.
	for _, r := range rows {
		for _, p := range slices.Concat(r.names, r.measured, r.may) {
			if !slices.ContainsFunc(all, func(pkg string) bool { return match(p, pkg) }) {
				t.Errorf("ARCHITECTURE.md:%d: `%s` names no package of the module", r.line, p)
			}
		}
	}

	rowOf := map[string]*layerRow{}
	for _, pkg := range all {
		r, err := rowFor(rows, pkg)
		if err != nil {
			t.Error(err)
			continue
		}
		rowOf[pkg] = r
	}

	for i := range rows {
		r := &rows[i]
		// The row's imports from outside itself: its packages may import
		// each other.
		got := map[string]bool{}
		for _, pkg := range all {
			if rowOf[pkg] != r {
				continue
			}
			for _, imp := range pkgs[pkg] {
				if rowOf[imp] == r {
					continue
				}
				got[imp] = true
				if !allowed(r, imp) {
					t.Errorf("layering: %s imports %s, outside its \"may import\" cell (ARCHITECTURE.md:%d); "+
						"an import up the table is a design change: remove it, or move the code", pkg, imp, r.line)
				}
			}
		}
		var missing, stale []string
		for _, imp := range slices.Sorted(maps.Keys(got)) {
			if !slices.ContainsFunc(r.measured, func(p string) bool { return match(p, imp) }) {
				missing = append(missing, "`"+imp+"`")
			}
		}
		for _, p := range r.measured {
			if !slices.ContainsFunc(slices.Collect(maps.Keys(got)), func(imp string) bool { return match(p, imp) }) {
				stale = append(stale, "`"+p+"`")
			}
		}
		var fix []string
		if len(missing) > 0 {
			fix = append(fix, "add "+strings.Join(missing, ", "))
		}
		if len(stale) > 0 {
			fix = append(fix, "remove "+strings.Join(stale, ", "))
		}
		if len(fix) > 0 {
			t.Errorf("ARCHITECTURE.md:%d, row %s: the \"imports (measured)\" cell is stale: %s",
				r.line, strings.Join(r.names, ", "), strings.Join(fix, "; "))
		}
	}
}

// allowed reports whether a package of r may import imp.
func allowed(r *layerRow, imp string) bool {
	if r.anything {
		return !strings.HasSuffix(imp, "test")
	}
	return slices.ContainsFunc(r.may, func(p string) bool { return match(p, imp) })
}

// match reports whether pattern names pkg: "p" is p alone, "p/..." is p and
// every package below it, as for the go command. A fake (a package whose
// name ends in "test") is only matched by its own name: a pattern does not
// let real code import a fake.
func match(pattern, pkg string) bool {
	if pattern == pkg {
		return true
	}
	prefix, ok := strings.CutSuffix(pattern, "/...")
	if !ok || strings.HasSuffix(pkg, "test") {
		return false
	}
	return pkg == prefix || strings.HasPrefix(pkg, prefix+"/")
}

// rowFor finds the row of pkg: a row naming it exactly, else the one whose
// "p/..." pattern is the longest that matches.
func rowFor(rows []layerRow, pkg string) (*layerRow, error) {
	var best *layerRow
	bestLen := -1
	tie := false
	for i := range rows {
		for _, n := range rows[i].names {
			if !match(n, pkg) {
				continue
			}
			l := len(n)
			if n == pkg {
				l = 1 << 20
			}
			switch {
			case l > bestLen:
				best, bestLen, tie = &rows[i], l, false
			case l == bestLen && best != &rows[i]:
				tie = true
			}
		}
	}
	switch {
	case best == nil:
		return nil, fmt.Errorf("package %s has no row in the table of ARCHITECTURE.md: place it (a row of its own, or its name in the row of its layer)", pkg)
	case tie:
		return nil, fmt.Errorf("package %s is in two rows of ARCHITECTURE.md (the second at line %d): keep one", pkg, best.line)
	}
	return best, nil
}

var backticked = regexp.MustCompile("`([^`]*)`")

// readLayerTable reads the table under the header "| package | owns |
// imports (measured) | may import |". In the three checked cells every
// `backticked` word is a package pattern and the rest is prose; "—" is
// nothing, "same" (may import) is the measured cell, "everything" anything.
func readLayerTable(path string) ([]layerRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []layerRow
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !in {
			in = line == "| package | owns | imports (measured) | may import |"
			continue
		}
		if strings.HasPrefix(line, "|---") {
			continue
		}
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("%s:%d: %d cells, want 4 (package, owns, imports (measured), may import)", path, n, len(cells))
		}
		r := layerRow{line: n, names: patterns(cells[0]), measured: patterns(cells[2])}
		if len(r.names) == 0 {
			return nil, fmt.Errorf("%s:%d: the package cell names no `package`", path, n)
		}
		for i, c := range []string{cells[2], cells[3]} {
			if c = strings.TrimSpace(c); c == "—" || strings.HasPrefix(c, "— ") || patterns(c) != nil {
				continue
			}
			switch {
			case i == 1 && c == "same":
			case i == 1 && c == "everything":
			default:
				return nil, fmt.Errorf("%s:%d: cell %q: write `packages`, \"—\" for nothing, or (may import) \"same\" or \"everything\"", path, n, c)
			}
		}
		switch may := strings.TrimSpace(cells[3]); may {
		case "same":
			r.may = r.measured
		case "everything":
			r.anything = true
		default:
			r.may = patterns(may)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no layer table (header \"| package | owns | imports (measured) | may import |\")", path)
	}
	return rows, nil
}

func patterns(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
		out = append(out, m[1])
	}
	return out
}

// moduleImports maps each package of the module under root (relative path)
// to its imports of the module, from its non-test files under the static
// build (CGO_ENABLED=0) and the runner's build (cgo, tag llamacpp). go/build
// reads only the import blocks, so this takes milliseconds.
func moduleImports(root string) (map[string][]string, error) {
	static := build.Default
	static.CgoEnabled = false
	runner := build.Default
	runner.CgoEnabled = true
	runner.BuildTags = []string{"llamacpp"}

	pkgs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root {
			if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" ||
				name == "node_modules" || name == "third_party" || name == "vendor" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		found := false
		imports := map[string]bool{}
		for _, ctx := range []build.Context{static, runner} {
			p, err := ctx.ImportDir(path, 0)
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if len(p.GoFiles)+len(p.CgoFiles) == 0 {
				continue // tests only: nothing can import it
			}
			found = true
			for _, imp := range p.Imports {
				if sub, ok := strings.CutPrefix(imp, module+"/"); ok {
					imports[sub] = true
				}
			}
		}
		if found {
			pkgs[rel] = slices.Sorted(maps.Keys(imports))
		}
		return nil
	})
	return pkgs, err
}
