package skills

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/tools"
)

// An instruction-only skill from a public collection, unchanged, installs
// with allow_unsigned and skill/read returns its instructions and its
// example files.
func TestThirdPartySkill(t *testing.T) {
	const dir = "testdata/thirdparty"
	src, err := os.ReadFile(filepath.Join(dir, "SOURCE"))
	if err != nil {
		t.Fatal(err)
	}
	pinned := 0
	sc := bufio.NewScanner(strings.NewReader(string(src)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 3 || f[0] != "sha256" {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "internal-comms", f[2]))
		if err != nil {
			t.Fatal(err)
		}
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f[1] {
			t.Fatalf("%s is not the pinned file (sha256 differs from SOURCE)", f[2])
		}
		pinned++
	}
	if pinned != 6 {
		t.Fatalf("SOURCE pins %d files, want 6", pinned)
	}
	inst := filepath.Join(tempDir(t), "skills")
	if _, err := Install(inst, filepath.Join(dir, "internal-comms"), InstallOptions{Trust: Trust{}, Confirm: yes}); err == nil || !strings.Contains(err.Error(), "allow_unsigned") {
		t.Fatalf("unsigned, not allowed: %v", err)
	}
	var plan string
	s, err := Install(inst, filepath.Join(dir, "internal-comms"), InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: func(p Plan) (Decision, error) {
		plan = p.Describe()
		return Decision{Install: true}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "UNSIGNED") || !strings.Contains(plan, "instructions only") {
		t.Errorf("the plan shown:\n%s", plan)
	}
	list, errs := LoadAll(inst, Trust{AllowUnsigned: true})
	if len(errs) > 0 || len(list) != 1 {
		t.Fatalf("load: %v %v", list, errs)
	}
	if _, errs := LoadAll(inst, Trust{}); len(errs) != 1 || !strings.Contains(errs[0].Error(), "not signed") {
		t.Fatalf("load once unsigned skills are no longer allowed: %v", errs)
	}
	reg := tools.NewRegistry()
	RegisterRead(reg, list)
	res, err := call(t, reg, "skill/read", `{"name":"internal-comms"}`)
	if err != nil || !strings.Contains(res.Text, "## When to use this skill") || !strings.Contains(res.Text, "examples/3p-updates.md") {
		t.Fatalf("skill/read: %.300q, %v", res.Text, err)
	}
	res, err = call(t, reg, "skill/read", `{"name":"internal-comms","file":"examples/3p-updates.md"}`)
	want, _ := os.ReadFile(filepath.Join(dir, "internal-comms/examples/3p-updates.md"))
	if err != nil || res.Text != string(want) {
		t.Fatalf("the example file: %v", err)
	}
	if idx := Index([]*Skill{s}, 0); !strings.Contains(idx, "- internal-comms: A set of resources") {
		t.Errorf("index:\n%s", idx)
	}
}
