package web

import (
	"bytes"
	"compress/gzip"
	"io/fs"
	"testing"
)

// assetsBudget is issue 29's bound on what a browser downloads besides the
// pages: the embedded assets, each gzip-compressed.
const assetsBudget = 150 << 10

// The embedded assets stay within the budget, compressed as a server or a
// proxy would send them.
func TestAssetsBudget(t *testing.T) {
	total, n := 0, 0
	err := fs.WalkDir(assetFS, "assets", func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		raw, err := assetFS.ReadFile(path)
		if err != nil {
			return err
		}
		var z bytes.Buffer
		w, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		w.Write(raw)
		w.Close()
		t.Logf("%s: %d bytes, %d gzipped", path, len(raw), z.Len())
		total += z.Len()
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
