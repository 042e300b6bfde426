package config

import (
	"os"
	"regexp"
	"testing"
)

// TestDocsConfigsLoad: every yaml block of the remote-model guide is a
// config that loads, so the guide's examples cannot rot.
func TestDocsConfigsLoad(t *testing.T) {
	doc, err := os.ReadFile("../docs/remote-models.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) < 5 {
		t.Fatalf("%d yaml blocks in docs/remote-models.md, want one per server", len(blocks))
	}
	env := func(string) (string, bool) { return "a-key", true }
	for i, b := range blocks {
		if _, err := Parse(b[1], "remote-models.md block "+string(rune('1'+i)), env); err != nil {
			t.Errorf("%v\n%s", err, b[1])
		}
	}
}
