package skills

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSignInstallLoad(t *testing.T) {
	root, inst := tempDir(t), tempDir(t)
	pub, priv := newKey(t)
	src := writeSkill(t, root, "greeter", map[string]string{
		"SKILL.md": strings.Replace(skillMD("greeter", "Greets people."), "license: MIT\n", "license: MIT\nallowed-tools: Bash Write\n", 1), "references/tone.md": "be kind\n", "scripts/hello.sh": "#!/bin/sh\necho hello\n",
		"tools.yaml": "tools:\n  - name: hello\n    doc: Say hello.\n    run: [scripts/hello.sh]\n    read: [/usr/bin]\n"})
	if err := Sign(src, priv); err != nil {
		t.Fatal(err)
	}
	trust := Trust{Keys: []ed25519.PublicKey{pub}}
	var shown Plan
	s, err := Install(inst, src, InstallOptions{Trust: trust, Confirm: func(p Plan) (Decision, error) {
		shown = p
		return Decision{Install: true, Grant: true}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	desc := shown.Describe()
	for _, want := range []string{"signed by ed25519:", "tool greeter/hello", "runs    scripts/hello.sh", "reads   its own folder, /usr/bin", "network none", "allowed-tools (grants nothing here; the policy decides): Bash Write"} {
		if !strings.Contains(desc, want) {
			t.Errorf("the plan shown does not say %q:\n%s", want, desc)
		}
	}
	if !s.Granted || s.SignedBy == "" || s.Dir != filepath.Join(inst, "greeter") {
		t.Fatalf("installed %+v", s)
	}
	l, err := Load(s.Dir, trust)
	if err != nil || !l.Granted || len(l.Tools) != 1 {
		t.Fatalf("load: %+v, %v", l, err)
	}
	if fi, err := os.Stat(filepath.Join(s.Dir, "scripts/hello.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("the script's mode: %v %v", fi.Mode(), err)
	}
	// A second install of the same name replaces nothing.
	if _, err := Install(inst, src, InstallOptions{Trust: trust, Confirm: yes}); err == nil || !strings.Contains(err.Error(), "already installed") {
		t.Fatalf("second install: %v", err)
	}
	// Signed by a key not trusted, with unsigned skills allowed: installed
	// as unsigned, after the owner saw that.
	other, otherPriv := newKey(t)
	src2 := writeSkill(t, root, "stranger", map[string]string{"SKILL.md": skillMD("stranger", "Signed by someone else.")})
	Sign(src2, otherPriv)
	if _, err := Install(inst, src2, InstallOptions{Trust: trust, Confirm: yes}); !errors.Is(err, ErrUntrusted) {
		t.Fatalf("untrusted, unsigned not allowed: %v", err)
	}
	s2, err := Install(inst, src2, InstallOptions{Trust: Trust{Keys: trust.Keys, AllowUnsigned: true}, Confirm: func(p Plan) (Decision, error) {
		shown = p
		return Decision{Install: true}, nil
	}})
	if err != nil || s2.SignedBy != "" || !strings.Contains(shown.Describe(), "UNSIGNED (or signed by a key skills.trust does not list)") {
		t.Fatalf("untrusted, unsigned allowed: %+v, %v", s2, err)
	}
	Remove(inst, "stranger")
	// Trust withdrawn: refused at the next load.
	if _, err := Load(s.Dir, Trust{Keys: []ed25519.PublicKey{other}, AllowUnsigned: true}); !errors.Is(err, ErrUntrusted) || !strings.Contains(err.Error(), "no longer lists") {
		t.Fatalf("load with the key no longer trusted: %v", err)
	}
	// One byte changed in any file: refused, the file named.
	for _, f := range []string{"references/tone.md", "SKILL.md", "scripts/hello.sh"} {
		p := filepath.Join(s.Dir, f)
		orig, _ := os.ReadFile(p)
		b := slices.Clone(orig)
		b[len(b)-2] ^= 1
		os.WriteFile(p, b, 0o644)
		if _, err := Load(s.Dir, trust); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), f+" changed") {
			t.Errorf("%s changed by one byte: %v", f, err)
		}
		os.WriteFile(p, orig, 0o644)
		os.Chmod(p, map[bool]os.FileMode{true: 0o755, false: 0o644}[strings.HasPrefix(f, "scripts/")])
	}
	if _, err := Load(s.Dir, trust); err != nil {
		t.Fatalf("restored: %v", err)
	}
	os.WriteFile(filepath.Join(s.Dir, "references/new.md"), []byte("x"), 0o644)
	if _, err := Load(s.Dir, trust); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "references/new.md was added") {
		t.Errorf("a file added: %v", err)
	}
	os.Remove(filepath.Join(s.Dir, "references/new.md"))
	os.Chmod(filepath.Join(s.Dir, "scripts/hello.sh"), 0o644)
	if _, err := Load(s.Dir, trust); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "changed mode") {
		t.Errorf("a mode changed: %v", err)
	}
	if err := Remove(inst, "greeter"); err != nil || len(entries(t, inst)) != 0 {
		t.Fatalf("remove: %v, left %v", err, entries(t, inst))
	}
}

func TestInstallRefusals(t *testing.T) {
	root := tempDir(t)
	pub, priv := newKey(t)
	_, wrong := newKey(t)
	trust := Trust{Keys: []ed25519.PublicKey{pub}}
	md := skillMD("s", "A skill.")
	cases := []struct {
		name  string
		setup func(dir string)
		trust Trust
		want  string
	}{
		{"unsigned", nil, trust, "not signed"},
		{"unsigned, allowed but declined", nil, Trust{AllowUnsigned: true}, "declined"},
		{"signed by an untrusted key", func(d string) { Sign(d, wrong) }, trust, "does not list"},
		{"signature over other files", func(d string) {
			Sign(d, priv)
			os.WriteFile(filepath.Join(d, "SKILL.md"), []byte(md+"x"), 0o644)
		}, trust, "SKILL.md changed"},
		{"signature forged", func(d string) {
			Sign(d, priv)
			b, _ := os.ReadFile(filepath.Join(d, SignatureFile))
			os.WriteFile(filepath.Join(d, SignatureFile), bytes.Replace(b, []byte(`"signature": "`), []byte(`"signature": "AAAA`), 1), 0o644)
		}, trust, "does not verify"},
		{"a symlink out", func(d string) { os.Symlink("/etc/passwd", filepath.Join(d, "references", "pw")); Sign(d, priv) }, trust, "is a symlink"},
		{"a symlink inside", func(d string) { os.Symlink("../SKILL.md", filepath.Join(d, "references", "again")) }, trust, "is a symlink"},
		{"a fifo", func(d string) { mkfifo(filepath.Join(d, "references", "pipe")) }, trust, "not a regular file"},
		{"an oversized file", func(d string) {
			os.WriteFile(filepath.Join(d, "assets.bin"), make([]byte, MaxFileBytes+1), 0o644)
		}, trust, "more than"},
		{"too many files", func(d string) {
			for i := 0; i <= MaxFiles; i++ {
				os.WriteFile(filepath.Join(d, "references", strings.Repeat("f", 1+i%7)+string(rune('a'+i%26))+strings.Repeat("0", i/26)), nil, 0o644)
			}
		}, trust, "more than 256 files"},
		{"a control character in a name", func(d string) { os.WriteFile(filepath.Join(d, "references", "a\nb"), nil, 0o644) }, trust, "control character"},
		{"a reserved name", func(d string) {
			os.Rename(d, filepath.Join(filepath.Dir(d), "gpio"))
		}, trust, "reserved"},
		{"a script that is not executable", func(d string) {
			os.WriteFile(filepath.Join(d, "tools.yaml"), []byte("tools:\n  - name: x\n    run: [references/r.md]\n"), 0o644)
			Sign(d, priv)
		}, trust, "not an executable file of the skill"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join(root, string(rune('a'+i)))
			dir := writeSkill(t, base, "s", map[string]string{"SKILL.md": md, "references/r.md": "r"})
			if c.name == "a reserved name" {
				os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(skillMD("gpio", "A skill.")), 0o644)
			}
			if c.setup != nil {
				c.setup(dir)
			}
			if c.name == "a reserved name" {
				dir = filepath.Join(base, "gpio")
			}
			inst := filepath.Join(base, "installed")
			_, err := Install(inst, dir, InstallOptions{Trust: c.trust, Confirm: func(Plan) (Decision, error) { return Decision{}, nil }})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if left := entries(t, inst); len(left) != 0 {
				t.Fatalf("left behind in the skills folder: %v", left)
			}
		})
	}
}

func TestInstallArchive(t *testing.T) {
	md := skillMD("arch", "From an archive.")
	tgz := func(entries ...tar.Header) *bytes.Buffer {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		for _, h := range entries {
			body := ""
			if h.Typeflag == tar.TypeReg {
				body = strings.Repeat("x", int(h.Size))
				if h.Name == "arch/SKILL.md" {
					body, h.Size = md, int64(len(md))
				}
			}
			tw.WriteHeader(&h)
			tw.Write([]byte(body))
		}
		tw.Close()
		gz.Close()
		return &buf
	}
	reg := func(name string, size int64) tar.Header {
		return tar.Header{Name: name, Typeflag: tar.TypeReg, Size: size, Mode: 0o644}
	}
	allow := Trust{AllowUnsigned: true}
	inst := filepath.Join(tempDir(t), "skills")
	s, err := InstallArchive(inst, tgz(tar.Header{Name: "arch/", Typeflag: tar.TypeDir, Mode: 0o755}, reg("arch/SKILL.md", 1), reg("arch/references/a.md", 3)),
		InstallOptions{Trust: allow, Source: "arch.tar.gz", Confirm: yes})
	if err != nil || s.Name() != "arch" || len(s.Tree.Files) != 2 {
		t.Fatalf("%+v, %v", s, err)
	}
	Remove(inst, "arch")
	for _, c := range []struct {
		name string
		hs   []tar.Header
		want string
	}{
		{"dot-dot", []tar.Header{reg("arch/SKILL.md", 1), reg("arch/../../evil", 1)}, "leaves the folder"},
		{"absolute", []tar.Header{reg("/etc/evil", 1)}, "leaves the folder"},
		{"symlink", []tar.Header{reg("arch/SKILL.md", 1), {Name: "arch/l", Typeflag: tar.TypeSymlink, Linkname: "/etc/shadow"}}, "is a link"},
		{"hard link", []tar.Header{reg("arch/SKILL.md", 1), {Name: "arch/l", Typeflag: tar.TypeLink, Linkname: "/etc/shadow"}}, "is a link"},
		{"device", []tar.Header{{Name: "arch/d", Typeflag: tar.TypeChar}}, "not a folder or a regular file"},
		{"huge", []tar.Header{reg("arch/SKILL.md", 1), reg("arch/big", MaxFileBytes+1)}, "more than"},
		{"a folder with data", []tar.Header{reg("arch/SKILL.md", 1), {Name: "arch/d/", Typeflag: tar.TypeDir, Size: 1 << 40}}, "non-file entry"},
		{"twice", []tar.Header{reg("arch/SKILL.md", 1), reg("arch/SKILL.md", 1)}, "file exists"},
	} {
		_, err := InstallArchive(inst, tgz(c.hs...), InstallOptions{Trust: allow, Source: c.name, Confirm: yes})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if left := entries(t, inst); len(left) != 0 {
			t.Errorf("%s: left behind: %v", c.name, left)
		}
	}
	if _, err := os.Stat("/etc/evil"); err == nil {
		t.Fatal("an entry was written outside")
	}
	if _, err := InstallArchive(inst, strings.NewReader("not gzip"), InstallOptions{Trust: allow, Confirm: yes}); err == nil || !strings.Contains(err.Error(), "not a .tar.gz") {
		t.Errorf("not an archive: %v", err)
	}
}

func TestInstallRefusesProtectedPaths(t *testing.T) {
	root := tempDir(t)
	data := filepath.Join(root, "data")
	os.MkdirAll(data, 0o700)
	for _, paths := range []string{"read: [" + data + "]", "write: [" + data + "/skills]", "read: [/]", "read: [" + root + "]"} {
		src := writeSkill(t, filepath.Join(root, "src", fmt.Sprint(len(paths))), "greedy", map[string]string{"SKILL.md": skillMD("greedy", "Wants too much."), "scripts/x.sh": "#!/bin/sh\n",
			"tools.yaml": "tools:\n  - name: x\n    run: [scripts/x.sh]\n    " + paths + "\n"})
		_, err := Install(filepath.Join(data, "skills"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes, Protected: []string{data}})
		if err == nil || !strings.Contains(err.Error(), "clawedge's own data and config") {
			t.Errorf("%s: %v", paths, err)
		}
	}
	src := writeSkill(t, filepath.Join(root, "src", "ok"), "modest", map[string]string{"SKILL.md": skillMD("modest", "Wants little."), "scripts/x.sh": "#!/bin/sh\n",
		"tools.yaml": "tools:\n  - name: x\n    run: [scripts/x.sh]\n    read: [" + root + "/datasheet, /usr/bin]\n"})
	if _, err := Install(filepath.Join(data, "skills"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes, Protected: []string{data}}); err != nil {
		t.Errorf("a sibling of data_dir: %v", err)
	}
}

// A file with a second hard link is refused in a folder as in an archive:
// the other path, which the reader of the folder does not see, could change
// it. Installed, a link made later refuses the skill at the next load and
// before the next run.
func TestHardLinkRefused(t *testing.T) {
	root := tempDir(t)
	pub, priv := newKey(t)
	trust := Trust{Keys: []ed25519.PublicKey{pub}}
	for name, link := range map[string]func(d string) string{
		"inside": func(d string) string { return filepath.Join(d, "references", "again.md") },
		"out":    func(d string) string { return filepath.Join(filepath.Dir(d), "elsewhere.md") },
	} {
		base := filepath.Join(root, name)
		dir := writeSkill(t, base, "linked", map[string]string{"SKILL.md": skillMD("linked", "Linked."), "references/r.md": "r\n"})
		if err := os.Link(filepath.Join(dir, "references", "r.md"), link(dir)); err != nil {
			t.Fatal(err)
		}
		Sign(dir, priv) // signed as it is: the link alone is refused
		inst := filepath.Join(base, "installed")
		_, err := Install(inst, dir, InstallOptions{Trust: trust, Confirm: yes})
		if err == nil || !strings.Contains(err.Error(), ".md has 2 hard links") {
			t.Errorf("%s: %v", name, err)
		}
		if left := entries(t, inst); len(left) != 0 {
			t.Errorf("%s: left %v", name, left)
		}
	}
	dir := writeSkill(t, filepath.Join(root, "later"), "linked", map[string]string{"SKILL.md": skillMD("linked", "Linked."), "references/r.md": "r\n",
		"scripts/t.sh": "#!/bin/sh\necho ok\n", "tools.yaml": "tools:\n  - name: t\n    run: [scripts/t.sh]\n"})
	Sign(dir, priv)
	s, err := Install(filepath.Join(root, "later", "installed"), dir, InstallOptions{Trust: trust, Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	reg := register(t, s)
	if res, err := call(t, reg, "linked/t", `{}`); err != nil || res.Text != "ok" {
		t.Fatalf("before the link: %q, %v", res.Text, err)
	}
	os.Link(filepath.Join(s.Dir, "scripts", "t.sh"), filepath.Join(root, "later", "handle"))
	if _, err := Load(s.Dir, trust); err == nil || !strings.Contains(err.Error(), "scripts/t.sh has 2 hard links") {
		t.Errorf("load: %v", err)
	}
	if _, err := call(t, reg, "linked/t", `{}`); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "hard links") {
		t.Errorf("run: %v", err)
	}
}
