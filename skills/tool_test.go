package skills

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/tools"
)

// probeSkill installs (unsigned, allowed) a skill whose tools exercise the
// sandbox, and registers them. Each declares the programs its script runs
// besides its shell's built-ins (cat, sleep), and nothing for the shell.
func probeSkill(t *testing.T) (*tools.Registry, *Skill, string) {
	t.Helper()
	root := tempDir(t)
	fake := filepath.Join(root, "w1")
	os.MkdirAll(fake, 0o755)
	os.WriteFile(filepath.Join(fake, "indoor"), []byte("21.5\n"), 0o644)
	toolsYAML := fmt.Sprintf(`tools:
  - name: read
    doc: Read a probe of the fake sysfs.
    params: [{name: sensor, type: string, required: true, enum: [indoor, outdoor]}]
    run: [scripts/read.sh, %[1]s, "{sensor}"]
    read: [%[1]s, %[2]s]
  - name: cat
    doc: Print a file.
    params: [{name: path, type: string, required: true}]
    run: [scripts/cat.sh, "{path}"]
    read: [%[2]s]
  - name: args
    doc: Print its arguments.
    params: [{name: v, type: string, required: true}, {name: n, type: integer}]
    run: [scripts/args.sh, "{v}", "{n}"]
  - name: connect
    doc: Open a TCP connection.
    params: [{name: port, type: integer, required: true}]
    run: [scripts/connect.sh, "{port}"]
  - name: connect_net
    doc: Open a TCP connection, network declared.
    params: [{name: port, type: integer, required: true}]
    run: [scripts/connect.sh, "{port}"]
    network: true
  - name: sleep
    doc: Sleep past its time limit.
    run: [scripts/sleep.sh]
    read: [%[3]s]
    timeout: 1s
`, fake, realOf(t, "/usr/bin/cat"), realOf(t, "/usr/bin/sleep"))
	src := writeSkill(t, root, "probe", map[string]string{
		"SKILL.md":           skillMD("probe", "Tests the sandbox."),
		"tools.yaml":         toolsYAML,
		"scripts/read.sh":    "#!/bin/sh\nexec cat \"$1/$2\"\n",
		"scripts/cat.sh":     "#!/bin/sh\nexec cat \"$1\"\n",
		"scripts/args.sh":    "#!/bin/sh\nprintf '%s|' \"$#\" \"$@\"\n",
		"scripts/connect.sh": "#!/usr/bin/bash\nexec 3<>/dev/tcp/127.0.0.1/$1 && echo connected\n",
		"scripts/sleep.sh":   "#!/bin/sh\nsleep 30 & wait\n",
	})
	s, err := Install(filepath.Join(root, "installed"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	rt := Runtime{Runner: &sandbox.Runner{}, Limits: sandbox.Limits{CPUSeconds: 5, MemoryMB: 256, NProc: 16}}
	if err := Register(reg, s, rt); err != nil {
		t.Fatal(err)
	}
	if err := RegisterRead(reg, []*Skill{s}); err != nil {
		t.Fatal(err)
	}
	return reg, s, root
}

func TestScriptToolRuns(t *testing.T) {
	reg, _, _ := probeSkill(t)
	res, err := call(t, reg, "probe/read", `{"sensor":"indoor"}`)
	if err != nil || res.Text != "21.5" {
		t.Fatalf("probe/read: %q, %v", res.Text, err)
	}
	if _, err := call(t, reg, "probe/read", `{"sensor":"../../etc/passwd"}`); err == nil || !strings.Contains(err.Error(), "indoor") {
		t.Fatalf("a value outside the enum: %v", err)
	}
	// A value is one argument, whatever it holds; an absent optional one is no argument.
	res, err = call(t, reg, "probe/args", `{"v":"a b; rm -rf / $(reboot) *"}`)
	if err != nil || res.Text != "1|a b; rm -rf / $(reboot) *|" {
		t.Fatalf("probe/args: %q, %v", res.Text, err)
	}
	res, err = call(t, reg, "probe/args", `{"v":"x","n":-3}`)
	if err != nil || res.Text != "2|x|-3|" {
		t.Fatalf("probe/args with n: %q, %v", res.Text, err)
	}
	if _, err := call(t, reg, "probe/args", `{"v":"--help"}`); err == nil || !strings.Contains(err.Error(), "read as an option") {
		t.Fatalf("an option smuggled as a value: %v", err)
	}
}

func TestScriptToolConfined(t *testing.T) {
	reg, s, root := probeSkill(t)
	secret := filepath.Join(root, "secret.txt")
	os.WriteFile(secret, []byte("s3cret\n"), 0o644) // readable to any uid: only Landlock stands in the way
	if _, err := call(t, reg, "probe/cat", fmt.Sprintf(`{"path":%q}`, secret)); err == nil {
		t.Fatal("read a path it did not declare")
	} else if !strings.Contains(err.Error(), "exit status") || !strings.Contains(err.Error(), "Permission denied") {
		t.Fatalf("reading an undeclared path: %v", err)
	}
	if _, err := call(t, reg, "probe/cat", fmt.Sprintf(`{"path":%q}`, secret)); err == nil || !strings.Contains(err.Error(), "read: ["+secret+"]") {
		t.Fatalf("the error does not say what to declare: %v", err)
	}
	// Its own folder it may read.
	if res, err := call(t, reg, "probe/cat", fmt.Sprintf(`{"path":%q}`, filepath.Join(s.Dir, "SKILL.md"))); err != nil || !strings.Contains(res.Text, "name: probe") {
		t.Fatalf("reading its own folder: %q, %v", res.Text, err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	if res, err := call(t, reg, "probe/connect", fmt.Sprintf(`{"port":%d}`, port)); err == nil || strings.Contains(res.Text, "connected") || !strings.Contains(err.Error(), "socket: Operation not permitted") {
		t.Fatalf("opened a socket without declaring network: %q, %v", res.Text, err)
	}
	if res, err := call(t, reg, "probe/connect_net", fmt.Sprintf(`{"port":%d}`, port)); err != nil || res.Text != "connected" {
		t.Fatalf("the same program with network declared: %q, %v", res.Text, err)
	}

	start := time.Now()
	res, err := call(t, reg, "probe/sleep", `{}`)
	if err == nil || !strings.Contains(err.Error(), "timed out") || res.Fields["exit_code"].Int != -1 {
		t.Fatalf("past its timeout: %v", err)
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("a 1 s timeout took %s", el)
	}
}

func TestScriptToolRefusesChangedFiles(t *testing.T) {
	reg, s, _ := probeSkill(t)
	os.WriteFile(filepath.Join(s.Dir, "scripts/cat.sh"), []byte("#!/bin/sh\ncat /etc/shadow\n"), 0o755)
	_, err := call(t, reg, "probe/cat", `{"path":"/etc/hostname"}`)
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "scripts/cat.sh changed") {
		t.Fatalf("a script changed while loaded: %v", err)
	}
}

func TestSkillRead(t *testing.T) {
	root := tempDir(t)
	src := writeSkill(t, root, "notes", map[string]string{"SKILL.md": skillMD("notes", "Notes."), "references/wiring.md": "GPIO17 to the relay\n"})
	s, err := Install(filepath.Join(root, "inst"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	RegisterRead(reg, []*Skill{s})
	res, err := call(t, reg, "skill/read", `{"name":"notes"}`)
	if err != nil || !strings.Contains(res.Text, "Do the thing carefully.") || !strings.Contains(res.Text, "references/wiring.md") {
		t.Fatalf("skill/read: %q, %v", res.Text, err)
	}
	if res, err := call(t, reg, "skill/read", `{"name":"notes","file":"references/wiring.md"}`); err != nil || res.Text != "GPIO17 to the relay\n" {
		t.Fatalf("a reference: %q, %v", res.Text, err)
	}
	for _, f := range []string{"../../etc/passwd", "/etc/passwd", ".clawedge-install"} {
		if _, err := call(t, reg, "skill/read", fmt.Sprintf(`{"name":"notes","file":%q}`, f)); err == nil || !strings.Contains(err.Error(), "has no file") {
			t.Errorf("file %s: %v", f, err)
		}
	}
	os.WriteFile(filepath.Join(s.Dir, "references/wiring.md"), []byte("GPIO17 to the mains\n"), 0o644)
	if _, err := call(t, reg, "skill/read", `{"name":"notes","file":"references/wiring.md"}`); !errors.Is(err, ErrTampered) {
		t.Errorf("a changed reference: %v", err)
	}
}

func TestReachable(t *testing.T) {
	d := tempDir(t)
	inner := filepath.Join(d, "data", "skills", "x")
	os.MkdirAll(inner, 0o755)
	os.Chmod(filepath.Join(d, "data"), 0o700)
	if err := Reachable(inner, 0); err == nil || !strings.Contains(err.Error(), "chmod o+x "+filepath.Join(d, "data")) {
		t.Fatalf("behind a 0700 folder: %v", err)
	}
	if err := Reachable(inner, 1000); err != nil {
		t.Fatalf("a non-root daemon: %v", err)
	}
	os.Chmod(filepath.Join(d, "data"), 0o711)
	if err := Reachable(inner, 0); err != nil {
		t.Fatalf("behind a 0711 folder: %v", err)
	}
}

// A skill loaded through a relative data_dir and a symlinked folder still
// runs: the sandbox is given the real, absolute path.
func TestScriptToolRelativeAndLinkedDir(t *testing.T) {
	root := tempDir(t)
	src := writeSkill(t, root, "rel", map[string]string{"SKILL.md": skillMD("rel", "Relative."), "scripts/hi.sh": "#!/bin/sh\necho hi\n",
		"tools.yaml": "tools:\n  - name: hi\n    doc: Say hi.\n    run: [scripts/hi.sh]\n"})
	if _, err := Install(filepath.Join(root, "real"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes}); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link"))
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, filepath.Join(root, "link"))
	if err != nil {
		t.Fatal(err)
	}
	list, errs := LoadAll(rel, Trust{AllowUnsigned: true})
	if len(errs) > 0 || len(list) != 1 || list[0].Dir != filepath.Join(root, "real", "rel") {
		t.Fatalf("load: %v %v", list, errs)
	}
	reg := tools.NewRegistry()
	Register(reg, list[0], Runtime{Runner: &sandbox.Runner{}})
	if res, err := call(t, reg, "rel/hi", `{}`); err != nil || res.Text != "hi" {
		t.Fatalf("rel/hi: %q, %v", res.Text, err)
	}
}
