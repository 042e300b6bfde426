package web

import (
	"io/fs"
	"testing"
)

// assetsBudget is issue 29's bound on what a browser downloads besides the
// pages: the embedded assets, each gzip-compressed.
const assetsBudget = 150 << 10

// The embedded assets stay within the budget, as they are embedded and
// sent: gzipped (static.go).
func TestAssetsBudget(t *testing.T) {
	total, n := 0, 0
	err := fs.WalkDir(staticFS, "static", func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		info, err := de.Info()
		if err != nil {
			return err
		}
		t.Logf("%s: %d bytes", path, info.Size())
		total += int(info.Size())
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 || total > assetsBudget {
		t.Fatalf("%d assets, %d bytes gzipped: the budget is %d", n, total, assetsBudget)
	}
	t.Logf("total: %d bytes gzipped", total)
}
