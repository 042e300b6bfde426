package skills

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/tools"
)

// testRoot holds every test's folders, open to all (0755): a skill's
// program runs as an unprivileged uid when the tests run as root, and must reach its
// folder.
var testRoot string

func TestMain(m *testing.M) {
	sandbox.Main() // the sandbox re-executes this binary as its helper
	dir, err := os.MkdirTemp("", "skills-test")
	if err != nil {
		panic(err)
	}
	os.Chmod(dir, 0o755)
	testRoot = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func tempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp(testRoot, "t")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o755)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// writeSkill writes files (path: content) as folder root/name; paths under
// scripts/ are executable.
func writeSkill(t *testing.T, root, name string, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasPrefix(p, "scripts/") {
			mode = 0o755
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func skillMD(name, desc string) string {
	return "---\nname: " + name + "\ndescription: " + desc + "\nlicense: MIT\n---\n\n# " + name + "\n\nDo the thing carefully.\n"
}

func newKey(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

// yes confirms every plan and grants nothing.
func yes(Plan) (Decision, error) { return Decision{Install: true}, nil }

// entries lists skillsDir, so a test can tell that nothing was left behind.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// call validates JSON arguments against the tool's spec, as the call path
// does, and runs it.
func call(t *testing.T, reg *tools.Registry, name, args string) (tools.Result, error) {
	t.Helper()
	tool, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	a, err := tool.Spec().ValidateJSON(json.RawMessage(args))
	if err != nil {
		return tools.Result{}, err
	}
	return tool.Run(context.Background(), a)
}
