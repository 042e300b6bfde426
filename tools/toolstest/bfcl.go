// Package toolstest holds what tests of tools files share: the one reader of
// the BFCL corpus (tools/testdata/bfcl), which the tools, the CLI's `tools
// check` and the llama-server tests all measure against.
package toolstest

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BFCLFile is the path of the Berkeley Function Calling Leaderboard's
// distinct tool definitions (tools/testdata/bfcl/README.md says where they
// come from), found from this file's place so any package's test can read
// it whatever its working directory.
func BFCLFile(t testing.TB) string {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("toolstest: cannot find the source directory")
	}
	return filepath.Join(filepath.Dir(self), "..", "testdata", "bfcl", "bfcl-v3-tools.json.gz")
}

// BFCLJSON is the corpus uncompressed: one JSON array of MCP tools/list
// definitions, as a tools file holds them.
func BFCLJSON(t testing.TB) []byte {
	t.Helper()
	f, err := os.Open(BFCLFile(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", f.Name(), err)
	}
	return data
}

// BFCLDefinitions is the corpus as one raw definition per tool.
func BFCLDefinitions(t testing.TB) []json.RawMessage {
	t.Helper()
	var defs []json.RawMessage
	if err := json.Unmarshal(BFCLJSON(t), &defs); err != nil {
		t.Fatalf("bfcl corpus: %v", err)
	}
	return defs
}
