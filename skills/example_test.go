package skills_test

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawedge/clawedge/skills"
)

// A skill folder is signed by its author, installed on the board after the
// owner saw what it declares, and loaded (verified again) at every start.
func Example() {
	root, _ := os.MkdirTemp("", "skills-example")
	defer os.RemoveAll(root)
	src := filepath.Join(root, "greenhouse")
	os.MkdirAll(filepath.Join(src, "scripts"), 0o755)
	os.WriteFile(filepath.Join(src, "SKILL.md"), []byte("---\nname: greenhouse\ndescription: Open the greenhouse vent when it is hot.\n---\nRead the temperature first.\n"), 0o644)
	os.WriteFile(filepath.Join(src, "scripts", "vent.sh"), []byte("#!/bin/sh\necho \"vent $1\"\n"), 0o755)
	os.WriteFile(filepath.Join(src, "tools.yaml"), []byte(`tools:
  - name: vent
    doc: Open or close the vent.
    params: [{name: to, type: string, required: true, enum: [open, closed]}]
    run: [scripts/vent.sh, "{to}"]
`), 0o644)

	pub, priv, _ := ed25519.GenerateKey(nil)
	if err := skills.Sign(src, priv); err != nil {
		fmt.Println(err)
		return
	}
	trust := skills.Trust{Keys: []ed25519.PublicKey{pub}}
	installed := filepath.Join(root, "data", "skills")
	_, err := skills.Install(installed, src, skills.InstallOptions{Trust: trust, Confirm: func(p skills.Plan) (skills.Decision, error) {
		fmt.Println("tools:", len(p.Skill.Tools), "network:", p.Skill.Tools[0].Network, "signed:", p.SignedBy != "")
		return skills.Decision{Install: true}, nil
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	list, errs := skills.LoadAll(installed, trust)
	fmt.Println(len(list), "loaded,", len(errs), "refused")
	fmt.Println(skills.Index(list, 0))
	// Output:
	// tools: 1 network: false signed: true
	// 1 loaded, 0 refused
	// Skills (call @skill/read{name="..."} for one's instructions before following it):
	// - greenhouse: Open the greenhouse vent when it is hot.
}
