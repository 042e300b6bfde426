package web

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"testing"
)

// The vendored files are those VENDORED.md names, unchanged: its sums are
// of the npm tarball's files, and a file edited by hand or swapped for
// another version fails here.
func TestVendoredAssetsUnchanged(t *testing.T) {
	doc, err := os.ReadFile("VENDORED.md")
	if err != nil {
		t.Fatal(err)
	}
	sums := regexp.MustCompile(`(?m)^([0-9a-f]{64})  (assets/\S+)$`).FindAllStringSubmatch(string(doc), -1)
	if len(sums) < 3 {
		t.Fatalf("VENDORED.md lists %d sums", len(sums))
	}
	for _, m := range sums {
		raw, err := os.ReadFile(m[2]) // the source; static_test.go holds its .gz to it
		if err != nil {
			t.Errorf("%s: %v", m[2], err)
			continue
		}
		if got := sha256.Sum256(raw); hex.EncodeToString(got[:]) != m[1] {
			t.Errorf("%s: sha256 %x, VENDORED.md says %s", m[2], got, m[1])
		}
	}
}
