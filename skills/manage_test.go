package skills_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/skills/skilltest"
	"github.com/clawedge/clawedge/tools"
)

// A signed skill with one tool, as a publisher hands it over.
func hiSkill(t *testing.T, key ed25519.PrivateKey) []byte {
	t.Helper()
	dir, err := skilltest.Write(t.TempDir(), "hello", map[string]string{
		"SKILL.md":      "---\nname: hello\ndescription: Greets.\n---\n\nSay hi.\n",
		"tools.yaml":    "tools:\n  - name: hi\n    doc: Say hi.\n    run: [scripts/hi.sh]\n    write: [/tmp/hello-out]\n",
		"scripts/hi.sh": "#!/bin/sh\necho hi\n"}, key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := skilltest.Archive(dir)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func run(t *testing.T, reg *tools.Registry, name string, args any) (tools.Result, error) {
	t.Helper()
	tool, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(args)
	a, err := tool.Spec().ValidateJSON(raw)
	if err != nil {
		return tools.Result{}, err
	}
	return tool.Run(context.Background(), a)
}

// The tools verify an upload as `clawedge skill install` does: one signed by
// a key the board does not trust is refused with why and leaves nothing; a
// trusted one is described (its tool and the right it declares) and not
// installed until skill/install; the upload installs once; skill/remove
// takes it away.
func TestManageTools(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	dir := filepath.Join(t.TempDir(), "skills")
	m := &skills.Manager{Dir: dir, Trust: skills.Trust{Keys: []ed25519.PublicKey{pub}}, Uploads: skills.Uploads{Dir: dir}}
	reg := tools.NewRegistry()
	if err := skills.RegisterManage(reg, m); err != nil {
		t.Fatal(err)
	}
	installed := func() []string {
		list, _ := skills.LoadAll(dir, m.Trust)
		var n []string
		for _, s := range list {
			n = append(n, s.Name())
		}
		return n
	}

	bad, err := m.Uploads.Stage(bytes.NewReader(hiSkill(t, other)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, reg, "skill/check", map[string]any{"upload": bad}); !errors.Is(err, skills.ErrUntrusted) {
		t.Fatalf("check of a skill signed by an untrusted key: %v", err)
	}
	if _, err := run(t, reg, "skill/install", map[string]any{"upload": bad}); err == nil {
		t.Fatal("installed a skill signed by an untrusted key")
	}
	if n := installed(); len(n) != 0 {
		t.Fatalf("installed after refusals: %v", n)
	}

	good, err := m.Uploads.Stage(bytes.NewReader(hiSkill(t, priv)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(t, reg, "skill/check", map[string]any{"upload": good})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"skill hello", "signed by ed25519:", "tool hello/hi", "writes  /tmp/hello-out"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, res.Text)
		}
	}
	if n := installed(); len(n) != 0 {
		t.Fatalf("the check installed %v", n)
	}
	if _, err := run(t, reg, "skill/install", map[string]any{"upload": good, "grant": true}); err != nil {
		t.Fatal(err)
	}
	list, errs := skills.LoadAll(dir, m.Trust)
	if len(list) != 1 || list[0].Name() != "hello" || !list[0].Granted || len(errs) != 0 {
		t.Fatalf("after install: %v %v", list, errs)
	}
	if _, err := run(t, reg, "skill/install", map[string]any{"upload": good}); !errors.Is(err, skills.ErrNoUpload) {
		t.Errorf("an upload installed twice: %v", err)
	}
	if _, err := run(t, reg, "skill/check", map[string]any{"upload": "../../etc/passwd"}); err == nil {
		t.Error("an upload id that is a path was taken")
	}
	if _, err := run(t, reg, "skill/remove", map[string]any{"name": "hello"}); err != nil {
		t.Fatal(err)
	}
	if n := installed(); len(n) != 0 {
		t.Fatalf("after remove: %v", n)
	}
}

// At most MaxUploads archives are kept: a browser uploading in a loop holds
// no more of the disk.
func TestUploadsBounded(t *testing.T) {
	u := skills.Uploads{Dir: t.TempDir()}
	var ids []string
	for i := range 5 {
		id, err := u.Stage(strings.NewReader(strings.Repeat("x", i+1)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	m, _ := filepath.Glob(filepath.Join(u.Dir, ".upload-*"))
	if len(m) != skills.MaxUploads {
		t.Fatalf("%d uploads kept: %v", len(m), m)
	}
	if f, err := u.Open(ids[4]); err != nil {
		t.Errorf("the newest upload is gone: %v", err)
	} else {
		f.Close()
	}
	if _, err := u.Open(ids[0]); !errors.Is(err, skills.ErrNoUpload) {
		t.Errorf("the oldest upload kept: %v", err)
	}
	if _, err := u.Stage(strings.NewReader("")); err == nil {
		t.Error("an empty upload kept")
	}
}
