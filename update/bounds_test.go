package update

import (
	"strings"
	"testing"
)

// The length limits of a manifest's version, board and file names.
func TestManifestNameBounds(t *testing.T) {
	ok := func() Manifest {
		return Manifest{Format: FormatVersion, Version: "v1.2.3", Board: "rpi", Files: []File{
			{Name: "root.squashfs", Target: TargetRoot, Size: 1, SHA256: strings.Repeat("ab", 32)}}}
	}
	for _, tc := range []struct {
		what string
		edit func(*Manifest)
		good bool
	}{
		{"as is", func(*Manifest) {}, true},
		{"version of 128", func(m *Manifest) { m.Version = "v" + strings.Repeat("1", 127) }, true},
		{"version of 129", func(m *Manifest) { m.Version = "v" + strings.Repeat("1", 128) }, false},
		{"version starting with a dot", func(m *Manifest) { m.Version = ".1" }, false},
		{"board of 64", func(m *Manifest) { m.Board = strings.Repeat("b", 64) }, true},
		{"board of 65", func(m *Manifest) { m.Board = strings.Repeat("b", 65) }, false},
		{"board in capitals", func(m *Manifest) { m.Board = "RPI" }, false},
		{"name parts of 128", func(m *Manifest) { m.Files[0].Name = strings.Repeat("d", 128) + "/" + strings.Repeat("f", 128) }, true},
		{"name part of 129", func(m *Manifest) { m.Files[0].Name = "d/" + strings.Repeat("f", 129) }, false},
		{"hidden name", func(m *Manifest) { m.Files[0].Name = ".x" }, false},
	} {
		m := ok()
		tc.edit(&m)
		if err := m.Check(); (err == nil) != tc.good {
			t.Errorf("%s: %v, want ok %v", tc.what, err, tc.good)
		}
	}
}
