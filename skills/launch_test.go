package skills

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/tools"
)

// installOne installs (unsigned, allowed) in root/installed a skill of one
// tool "t" running scripts/t.sh (the script given) with the tools.yaml
// lines decl, and registers it.
func installOne(t *testing.T, root, name, script, decl string) (*tools.Registry, *Skill, error) {
	t.Helper()
	src := writeSkill(t, root, name, map[string]string{
		"SKILL.md":     skillMD(name, "Tests how a program starts."),
		"scripts/t.sh": script,
		"tools.yaml":   "tools:\n  - name: t\n    doc: The tool.\n" + decl,
	})
	s, err := Install(filepath.Join(root, "installed"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes})
	if err != nil {
		return nil, nil, err
	}
	return register(t, s), s, nil
}

func register(t *testing.T, s *Skill) *tools.Registry {
	t.Helper()
	reg := tools.NewRegistry()
	rt := Runtime{Runner: &sandbox.Runner{}, Limits: sandbox.Limits{CPUSeconds: 5, MemoryMB: 256, NProc: 16}}
	if err := Register(reg, s, rt); err != nil {
		t.Fatal(err)
	}
	return reg
}

func realOf(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Skipf("this board has no %s", p)
	}
	return r
}

func TestParseShebang(t *testing.T) {
	for _, c := range []struct {
		head, interp, arg string
		ok                bool
		err               string
	}{
		{"#!/bin/sh\necho", "/bin/sh", "", true, ""},
		{"#! /bin/sh -e \n", "/bin/sh", "-e", true, ""},
		{"#!\t/usr/bin/env  bash\t\n", "/usr/bin/env", "bash", true, ""},
		{"#!/usr/bin/env -S bash -e\n", "/usr/bin/env", "-S bash -e", true, ""}, // one argument, as Linux passes it
		{"#!/usr/bin/awk -f  -v x=1\n", "/usr/bin/awk", "-f  -v x=1", true, ""}, // blanks inside kept
		{"echo hi\n", "", "", false, ""},                                        // no #!
		{"\x7fELF\x02\x01", "", "", false, ""},                                  // a program
		{"#!/bin/sh\r\necho\r\n", "", "", true, "Windows line ends"},
		{"#!\n", "", "", true, "names no interpreter"},
		{"#!   \t \n", "", "", true, "names no interpreter"},
		{"#!/bin/sh", "", "", true, "does not end within the first 256 bytes"},
		{"#!/bin/" + strings.Repeat("s", 260) + "\n", "", "", true, "does not end within"},
		{"#!/bin/sh \x1b[2J\n", "", "", true, "control character"},
	} {
		interp, arg, ok, err := parseShebang([]byte(c.head))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.head, err, c.err)
			}
			continue
		}
		if err != nil || interp != c.interp || arg != c.arg || ok != c.ok {
			t.Errorf("%q: %q %q %v %v, want %q %q %v", c.head, interp, arg, ok, err, c.interp, c.arg, c.ok)
		}
	}
}

// The grant of a script is its interpreter's real file, with the loader
// and libraries the interpreter's ELF headers name, found as the loader
// would without its cache; for env, env's and the program's.
func TestLaunchGrants(t *testing.T) {
	sh, bash, env := realOf(t, "/bin/sh"), realOf(t, "/bin/bash"), realOf(t, "/usr/bin/env")
	info, err := boardELF(sh)
	if err != nil || info.interp == "" {
		t.Fatalf("the loader of %s: %+v, %v", sh, info, err)
	}
	loader := realOf(t, info.interp)
	launch := func(script string) (Launch, error) {
		return readLaunch([]byte(script), nil, "", nil)
	}
	l, err := launch("#!/bin/sh\n")
	if err != nil || l.Grants[0] != sh || !slices.Contains(l.Grants, loader) || !slices.ContainsFunc(l.Grants, func(p string) bool { return strings.Contains(p, "/libc.so") }) {
		t.Fatalf("#!/bin/sh: %+v, %v", l, err)
	}
	for _, g := range l.Grants {
		if fi, err := os.Lstat(g); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("granted %s, not a regular file (a folder, a symlink): %v", g, err)
		}
	}
	l, err = launch("#!/usr/bin/env bash\n")
	if err != nil || l.Grants[0] != env || l.Env != "/usr/bin/bash" || !slices.Contains(l.Grants, bash) {
		t.Fatalf("#!/usr/bin/env bash: %+v, %v", l, err)
	}
	if !slices.ContainsFunc(l.Grants, func(p string) bool { return strings.Contains(p, "/libtinfo.so") }) {
		t.Errorf("bash's own library is not granted: %v", l.Grants)
	}
	for script, want := range map[string]string{
		"#!/usr/bin/env -S bash -e\n":    "env options such as -S are not supported",
		"#!/usr/bin/env bash -e\n":       `Linux passes "bash -e" to env as ONE program name`,
		"#!/usr/bin/env\n":               "names no program for env to run",
		"#!/usr/bin/env X=1\n":           "as a variable",
		"#!/usr/bin/env no-such-prog\n":  `no program "no-such-prog" on this board in /usr/local/bin:/usr/bin:/bin`,
		"#!/usr/bin/python9.99\n":        "the interpreter /usr/bin/python9.99 does not exist on this board",
		"#!bash\n":                       `the interpreter "bash" is not an absolute, clean path`,
		"set -e\necho hi\n":              "no #! line and is not an ELF program",
		"\x7fELF\x02\x01\x01" + "junk\n": "not a valid ELF file",
	} {
		_, err := readLaunch([]byte(script), func() (io.ReaderAt, error) { return strings.NewReader(script), nil }, "", nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", script, err, want)
		}
	}
	// An interpreter that is itself a script: named, not followed; one
	// that is not executable. One that was an ELF program a moment ago is
	// read again, not remembered.
	inner := filepath.Join(tempDir(t), "interp")
	elfSh, _ := os.ReadFile(sh)
	os.WriteFile(inner, elfSh, 0o755)
	if _, err := launch("#!" + inner + "\n"); err != nil {
		t.Fatalf("a copy of sh as interpreter: %v", err)
	}
	os.WriteFile(inner, []byte("#!/bin/sh\n"), 0o755)
	plain := filepath.Join(filepath.Dir(inner), "plain")
	os.WriteFile(plain, []byte("x\n"), 0o644)
	if _, err := launch("#!" + plain + "\n"); err == nil || !strings.Contains(err.Error(), "is not executable (mode 0644)") {
		t.Errorf("a plain file as interpreter: %v", err)
	}
	if _, err := launch("#!" + inner + "\n"); err == nil || !strings.Contains(err.Error(), "is not an ELF program") {
		t.Errorf("a script as interpreter: %v", err)
	}
}

// The shape of issue 28: a bash script whose tools.yaml declares only the
// devices folder it reads. It installs, says how it starts, and runs in
// the real sandbox, granted bash's file and no folder of programs.
func TestBashScriptDeclaringOnlyItsData(t *testing.T) {
	root := tempDir(t)
	fake := filepath.Join(root, "w1")
	os.MkdirAll(filepath.Join(fake, "28-01"), 0o755)
	os.WriteFile(filepath.Join(fake, "28-01", "temperature"), []byte("21437\n"), 0o644)
	script := "#!/bin/bash\n# read_temp.sh DIR: the first probe's temperature\nset -eu\nfor d in \"$1\"/28-*; do\n  read -r t < \"$d/temperature\"\n  printf '%d.%03d\\n' $((t / 1000)) $((t % 1000))\n  exit 0\ndone\necho \"no probe under $1\" >&2\nexit 1\n"
	for _, shebang := range []string{"#!/bin/bash", "#!/usr/bin/env bash", "#!/bin/sh"} {
		name := map[string]string{"#!/bin/bash": "direct", "#!/usr/bin/env bash": "viaenv", "#!/bin/sh": "posix"}[shebang]
		body := strings.Replace(script, "#!/bin/bash", shebang, 1)
		reg, s, err := installOne(t, root, name, body, fmt.Sprintf("    run: [scripts/t.sh, %s]\n    read: [%s]\n", fake, fake))
		if err != nil {
			t.Fatalf("%s: %v", shebang, err)
		}
		res, err := call(t, reg, name+"/t", `{}`)
		if err != nil || res.Text != "21.437" {
			t.Fatalf("%s: %q, %v", shebang, res.Text, err)
		}
		// What it was granted: its folder, the declared one, and files.
		tool, _ := reg.Lookup(name + "/t")
		spec := tool.(*scriptTool).sandboxSpec(nil, s.Launches["t"])
		for _, p := range spec.Read {
			if fi, err := os.Stat(p); p != s.Dir && p != fake && (err != nil || fi.IsDir()) {
				t.Errorf("%s: granted the folder %s", shebang, p)
			}
		}
		if !strings.Contains((Plan{Skill: s}).Describe(), "starts  "+shebang+", granted /") {
			t.Errorf("%s: the plan does not say how it starts:\n%s", shebang, (Plan{Skill: s}).Describe())
		}
	}
}

// A path a script needs and its tool does not declare fails the call with
// the path (the real one, as the sandbox sees it) and the tools.yaml line
// that grants it: a file it reads, a program it runs (by path, or by name
// as dash reports it), a file reached through a symlink.
func TestUndeclaredPathNamed(t *testing.T) {
	root := tempDir(t)
	data, other := filepath.Join(root, "data"), filepath.Join(root, "other")
	os.MkdirAll(data, 0o755)
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(data, "ok"), []byte("fine\n"), 0o644)
	os.WriteFile(filepath.Join(other, "secret"), []byte("s3cret\n"), 0o644) // any uid may read it: only Landlock refuses
	os.Symlink(filepath.Join(other, "secret"), filepath.Join(data, "link"))
	cat := realOf(t, "/usr/bin/cat")
	decl := fmt.Sprintf("    params: [{name: f, type: string, required: true}]\n    run: [scripts/t.sh, \"{f}\"]\n    read: [%s]\n", data)
	cases := []struct {
		name, script, file, want string
	}{
		{"bashread", "#!/bin/bash\nread -r l < \"$1\" && echo \"$l\"\n", filepath.Join(other, "secret"),
			"the sandbox denied " + filepath.Join(other, "secret") + ", which the tool does not declare: add to the tool in tools.yaml: read: [" + filepath.Join(other, "secret") + "]"},
		{"bashcat", "#!/bin/bash\n/usr/bin/cat \"$1\"\n", filepath.Join(data, "ok"), "read: [" + cat + "]"},
		{"dashcat", "#!/bin/sh\ncat \"$1\"\n", filepath.Join(data, "ok"), "the sandbox denied " + cat + ", which the tool does not declare: add to the tool in tools.yaml: read: [" + cat + "]"},
		{"link", "#!/bin/sh\nread -r l < \"$1\" && echo \"$l\"\n", filepath.Join(data, "link"),
			"the sandbox denied " + filepath.Join(other, "secret") + " (" + filepath.Join(data, "link") + ", through a symlink), which the tool does not declare: add to the tool in tools.yaml: read: [" + filepath.Join(other, "secret") + "]"},
	}
	for _, c := range cases {
		reg, _, err := installOne(t, root, c.name, c.script, decl)
		if err != nil {
			t.Fatal(err)
		}
		res, err := call(t, reg, c.name+"/t", fmt.Sprintf(`{"f":%q}`, c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(res.Text, "s3cret") {
			t.Errorf("%s: %q, %v\nwant an error with %q", c.name, res.Text, err, c.want)
		}
	}
	// Declared, the same program runs.
	reg, _, err := installOne(t, root, "catdecl", "#!/bin/sh\ncat \"$1\"\n", strings.Replace(decl, "read: ["+data+"]", "read: ["+data+", "+cat+"]", 1))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := call(t, reg, "catdecl/t", fmt.Sprintf(`{"f":%q}`, filepath.Join(data, "ok"))); err != nil || res.Text != "fine" {
		t.Fatalf("cat declared: %q, %v", res.Text, err)
	}
}

// Checked at install, before the owner is asked: an interpreter the board
// lacks, a program Linux cannot start, a declared path through a symlink.
func TestStartRefusedAtInstall(t *testing.T) {
	root := tempDir(t)
	real := filepath.Join(root, "real")
	os.MkdirAll(real, 0o755)
	os.Symlink(real, filepath.Join(root, "alias"))
	for i, c := range []struct{ script, decl, want string }{
		{"#!/usr/bin/python9.99\nprint(1)\n", "", "tools.yaml: tool t: scripts/t.sh cannot start on this board: #!/usr/bin/python9.99: the interpreter /usr/bin/python9.99 does not exist on this board"},
		{"echo no shebang\n", "", "no #! line and is not an ELF program"},
		{"#!/bin/sh\r\necho\r\n", "", "Windows line ends"},
		{"#!/usr/bin/env -S bash -e\n", "", "env options such as -S are not supported"},
		{"#!/bin/sh\n", "    read: [" + filepath.Join(root, "alias") + "]\n", "read " + filepath.Join(root, "alias") + " goes through a symlink to " + real + ", and the sandbox grants paths as they are: declare the real path (read: [" + real + "])"},
		{"#!/bin/sh\n", "    write: [" + filepath.Join(root, "alias") + "]\n", "(write: [" + real + "])"},
	} {
		name := fmt.Sprintf("bad%d", i)
		_, _, err := installOne(t, root, name, c.script, "    run: [scripts/t.sh]\n"+c.decl)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.script, err, c.want)
		}
		if left := entries(t, filepath.Join(root, "installed")); slices.Contains(left, name) {
			t.Errorf("%s installed", name)
		}
	}
}

// A skill's own ELF program starts with no #! line: granted its loader
// and libraries, found in its headers.
func TestELFProgram(t *testing.T) {
	bin, err := os.ReadFile(realOf(t, "/usr/bin/true"))
	if err != nil {
		t.Fatal(err)
	}
	root := tempDir(t)
	reg, s, err := installOne(t, root, "elf", string(bin), "    run: [scripts/t.sh]\n")
	if err != nil {
		t.Fatal(err)
	}
	l := s.Launches["t"]
	if l.Shebang != "" || !slices.ContainsFunc(l.Grants, func(p string) bool { return strings.Contains(p, "/libc.so") }) {
		t.Fatalf("launch %+v", l)
	}
	if _, err := call(t, reg, "elf/t", `{}`); err != nil {
		t.Fatalf("running it: %v", err)
	}
}

// The interpreter removed after the install: the call names it, nothing runs.
func TestInterpreterGoneSinceInstall(t *testing.T) {
	root := tempDir(t)
	interp := filepath.Join(root, "mysh")
	b, err := os.ReadFile(realOf(t, "/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(interp, b, 0o755)
	reg, s, err := installOne(t, root, "gone", "#!"+interp+"\necho hi\n", "    run: [scripts/t.sh]\n")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := call(t, reg, "gone/t", `{}`); err != nil || res.Text != "hi" {
		t.Fatalf("with its interpreter: %q, %v", res.Text, err)
	}
	os.Remove(interp)
	if _, err := call(t, reg, "gone/t", `{}`); err == nil || !strings.Contains(err.Error(), "the interpreter "+interp+" does not exist on this board") {
		t.Fatalf("without: %v", err)
	}
	// `clawedge skill show` of the loaded skill says so too.
	l, err := Load(s.Dir, Trust{AllowUnsigned: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := (Plan{Skill: l}).Describe(); !strings.Contains(d, "starts  CANNOT START on this board: #!"+interp+": the interpreter "+interp+" does not exist") {
		t.Fatalf("shown:\n%s", d)
	}
}

// docs/skills.md's tools.yaml and the ds18b20 example's script run as
// written, with /sys pointed at a fake sysfs laid out as the kernel lays it
// out: the probes under the bus's devices folder are symlinks into the bus
// master's folder, which the tool declares too.
func TestDocsExampleRuns(t *testing.T) {
	md, err := os.ReadFile(filepath.Join("..", "docs", "skills.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(tools:.*?)```").FindSubmatch(md)
	if m == nil {
		t.Fatal("docs/skills.md has no tools.yaml example")
	}
	script, err := os.ReadFile(filepath.Join("..", "docs", "skills", "ds18b20", "scripts", "read_temp.sh"))
	if err != nil {
		t.Fatal(err)
	}
	root := tempDir(t)
	sys := filepath.Join(root, "sys")
	master := filepath.Join(sys, "devices", "w1_bus_master1")
	devices := filepath.Join(sys, "bus", "w1", "devices")
	os.MkdirAll(devices, 0o755)
	for id, temp := range map[string]string{"28-000000000001": "21437", "28-000000000002": "-1250"} {
		os.MkdirAll(filepath.Join(master, id), 0o755)
		os.WriteFile(filepath.Join(master, id, "w1_slave"), []byte("72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t="+temp+"\n"), 0o644)
		os.Symlink(filepath.Join("..", "..", "..", "devices", "w1_bus_master1", id), filepath.Join(devices, id))
	}
	toolsYAML := strings.ReplaceAll(string(m[1]), "/sys/", sys+"/")
	if strings.Contains(toolsYAML, "/usr/bin") {
		t.Errorf("docs/skills.md's example still declares /usr/bin:\n%s", toolsYAML)
	}
	src := writeSkill(t, root, "ds18b20", map[string]string{"SKILL.md": skillMD("ds18b20", "Probes."), "tools.yaml": toolsYAML, "scripts/read_temp.sh": string(script)})
	var plan Plan
	shown := func(p Plan) (Decision, error) { plan = p; return Decision{Install: true}, nil }
	s, err := Install(filepath.Join(root, "installed"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: shown})
	if err != nil {
		t.Fatal(err)
	}
	if d := plan.Describe(); strings.Contains(d, "note:") {
		t.Errorf("a note with every path declared:\n%s", d)
	}
	reg := register(t, s)
	for sensor, want := range map[string]string{"indoor": "21.437", "outdoor": "-1.250"} {
		if res, err := call(t, reg, "ds18b20/read_temp", fmt.Sprintf(`{"sensor":%q}`, sensor)); err != nil || res.Text != want {
			t.Errorf("%s: %q, %v", sensor, res.Text, err)
		}
	}
	// Without the bus master's folder (issue 28's tools.yaml), the plan
	// says where the probes lead, the read through the symlink is denied,
	// and the error says what to declare.
	os.RemoveAll(filepath.Join(root, "installed"))
	os.WriteFile(filepath.Join(src, "tools.yaml"), []byte(strings.Replace(toolsYAML, ", "+master+"]", "]", 1)), 0o644)
	s, err = Install(filepath.Join(root, "installed"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: shown})
	if err != nil {
		t.Fatal(err)
	}
	note := "  note: tool read_temp reads " + devices + ", where 28-000000000001 -> " + filepath.Join(master, "28-000000000001") + ", 28-000000000002 -> " +
		filepath.Join(master, "28-000000000002") + " lead outside what it declares: reads through them are denied unless it declares read: [" + master + "]"
	if d := plan.Describe(); !strings.Contains(d, note) {
		t.Errorf("the plan does not say where the probes lead:\n%s\nwant %s", d, note)
	}
	_, err = call(t, register(t, s), "ds18b20/read_temp", `{"sensor":"indoor"}`)
	if err == nil || !strings.Contains(err.Error(), "read: ["+filepath.Join(master, "28-000000000001", "w1_slave")+"]") {
		t.Fatalf("the bus master undeclared: %v", err)
	}
}

// Under a root daemon, a data_dir of mode 0700 keeps the run's uid from
// the skill's folder: the call says so, with the chmod, before anything
// runs, whatever the script's interpreter.
func TestDataDir0700UnderRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the run keeps the daemon's uid when it is not root")
	}
	root := tempDir(t)
	data := filepath.Join(root, "data")
	src := writeSkill(t, root, "shut", map[string]string{"SKILL.md": skillMD("shut", "Shut in."), "scripts/t.sh": "#!/usr/bin/env bash\necho hi\n",
		"tools.yaml": "tools:\n  - name: t\n    run: [scripts/t.sh]\n"})
	s, err := Install(filepath.Join(data, "skills"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	reg := register(t, s)
	if res, err := call(t, reg, "shut/t", `{}`); err != nil || res.Text != "hi" {
		t.Fatalf("data_dir 0755: %q, %v", res.Text, err)
	}
	os.Chmod(data, 0o700)
	if _, err := call(t, reg, "shut/t", `{}`); err == nil || !strings.Contains(err.Error(), "has mode 0700; allow others to pass through it (chmod o+x "+data+")") {
		t.Fatalf("data_dir 0700: %v", err)
	}
}

// What a program starts with obeys the rule of declared paths: nothing of
// clawedge's own data (refused at install), nor another skill's file
// (refused at the call, wherever the skills' folder is).
func TestStartWithProtectedRefused(t *testing.T) {
	root := tempDir(t)
	sh, err := os.ReadFile(realOf(t, "/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(root, "data")
	os.MkdirAll(data, 0o755)
	os.WriteFile(filepath.Join(data, "tool"), sh, 0o755)
	src := writeSkill(t, root, "prot", map[string]string{"SKILL.md": skillMD("prot", "P."), "scripts/t.sh": "#!" + filepath.Join(data, "tool") + "\necho hi\n",
		"tools.yaml": "tools:\n  - name: t\n    run: [scripts/t.sh]\n"})
	_, err = Install(filepath.Join(root, "installed"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes, Protected: []string{data}})
	if err == nil || !strings.Contains(err.Error(), "starts with "+filepath.Join(data, "tool")+", which lies in "+data) {
		t.Fatalf("an interpreter in data_dir: %v", err)
	}
	// Skill a ships an ELF program; skill b names it as its interpreter.
	_, a, err := installOne(t, root, "a", string(sh), "    run: [scripts/t.sh]\n")
	if err != nil {
		t.Fatal(err)
	}
	reg, _, err := installOne(t, root, "b", "#!"+filepath.Join(a.Dir, "scripts", "t.sh")+"\necho hi\n", "    run: [scripts/t.sh]\n")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := call(t, reg, "b/t", `{}`); err == nil || !strings.Contains(err.Error(), "in the skills' folder: refused") {
		t.Fatalf("another skill's program as interpreter: %q, %v", res.Text, err)
	}
}

// A declared file the run's uid may not read by its mode: the error says
// that declaring it is not what is missing.
func TestDeclaredButModeDenied(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root daemon's run has a uid other than the files' owner")
	}
	root := tempDir(t)
	secret := filepath.Join(root, "secret")
	os.WriteFile(secret, []byte("x\n"), 0o600)
	reg, _, err := installOne(t, root, "mode", "#!/bin/sh\nread -r l < \"$1\"\n", fmt.Sprintf("    run: [scripts/t.sh, %s]\n    read: [%s]\n", secret, secret))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, reg, "mode/t", `{}`); err == nil || !strings.Contains(err.Error(), secret+" is declared (or granted for the program's start), so its file permissions refuse it to the uid the program runs as (mode 0600)") {
		t.Fatalf("%v", err)
	}
}

// What resolving a start costs before each run: the #! line, the
// interpreter's headers and its libraries'.
func BenchmarkProgramLaunch(b *testing.B) {
	dir := b.TempDir()
	for name, script := range map[string]string{"sh": "#!/bin/sh\n", "envbash": "#!/usr/bin/env bash\n"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(script), 0o755)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := programLaunch(p, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestDeniedPaths(t *testing.T) {
	for stderr, want := range map[string][]string{
		"cat: /etc/x: Permission denied\n":                                                                                                   {"/etc/x"},
		"ls: cannot open directory '/etc/a b': Permission denied\n":                                                                          {"/etc/a b"},
		"/s/t.sh: line 3: /usr/bin/cat: Permission denied\n":                                                                                 {"/usr/bin/cat"},
		"/s/t.sh: 3: cat: Permission denied\n":                                                                                               {"cat"},
		"/s/t.sh: 2: cannot open /etc/x: Permission denied\n":                                                                                {"/etc/x"},
		"PermissionError: [Errno 13] Permission denied: '/etc/x'\n":                                                                          {"/etc/x"},
		"/usr/bin/env: ‘bash’: Permission denied\n":                                                                                          {"bash"},
		"mkdir: cannot create directory ‘/x/y’: Permission denied\n":                                                                         {"/x/y"},
		"cp: cannot open '/x' for reading: Permission denied\n":                                                                              {"/x"},
		"cp: cannot stat source for reading: Permission denied\n":                                                                            nil, // prose, not a name
		"p: error while loading shared libraries: libx.so.1: cannot open shared object file: Permission denied\n":                            nil,
		"cat: /a: Permission denied\ncat: /a: Permission denied\ncat: /b: No such file or directory\n":                                       {"/a"},
		"a: /1: Permission denied\nb: /2: Permission denied\nc: /3: Permission denied\nd: /4: Permission denied\ne: /5: Permission denied\n": {"/1", "/2", "/3", "/4"},
		"x: /a/../b: Permission denied\n":                                                                                                    {"/b"},
		"x: \x1b[2J/a: Permission denied\n":                                                                                                  nil,
	} {
		if got := deniedPaths([]byte(stderr)); !slices.Equal(got, want) {
			t.Errorf("%q: %q, want %q", stderr, got, want)
		}
	}
	if lib := deniedLibrary([]byte("p: error while loading shared libraries: libx.so.1: cannot open shared object file: Permission denied\n")); lib != "libx.so.1" {
		t.Errorf("the library: %q", lib)
	}
}

// A skill's ELF program loading a library the skill ships, found through
// its RUNPATH ($ORIGIN/../lib): nothing to declare, its folder is its own.
func TestELFProgramWithItsOwnLibrary(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the test program is built for x86-64")
	}
	prog, err := os.ReadFile(filepath.Join("testdata", "elf", "prog-amd64"))
	if err != nil {
		t.Fatal(err)
	}
	lib, err := os.ReadFile(filepath.Join("testdata", "elf", "libfoo-amd64.so"))
	if err != nil {
		t.Fatal(err)
	}
	root := tempDir(t)
	src := writeSkill(t, root, "bundled", map[string]string{"SKILL.md": skillMD("bundled", "Ships a library."), "scripts/prog": string(prog), "lib/libfoo.so": string(lib),
		"tools.yaml": "tools:\n  - name: t\n    run: [scripts/prog]\n"})
	s, err := Install(filepath.Join(root, "installed"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes})
	if err != nil {
		t.Fatal(err)
	}
	if g := s.Launches["t"].Grants; !slices.Contains(g, filepath.Join(src, "lib", "libfoo.so")) {
		t.Fatalf("grants %v", g)
	}
	if res, err := call(t, register(t, s), "bundled/t", `{}`); err != nil || res.Text != "ok" {
		t.Fatalf("%q, %v", res.Text, err)
	}
	// Without it, the install names the library.
	os.Remove(filepath.Join(src, "lib", "libfoo.so"))
	if _, err := Install(filepath.Join(root, "again"), src, InstallOptions{Trust: Trust{AllowUnsigned: true}, Confirm: yes}); err == nil ||
		!strings.Contains(err.Error(), "the program needs the library libfoo.so, which is in none of "+filepath.Join(src, "lib")+", /lib/x86_64-linux-gnu") {
		t.Fatalf("its library missing: %v", err)
	}
}

// Under a root daemon, an interpreter the run's uid cannot reach (a folder
// of mode 0700 on its way) is refused at install, with the chmod.
func TestInterpreterUnreachableUnderRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the run keeps the daemon's uid when it is not root")
	}
	root := tempDir(t)
	priv := filepath.Join(root, "priv")
	os.Mkdir(priv, 0o700)
	b, err := os.ReadFile(realOf(t, "/bin/sh"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(priv, "sh"), b, 0o755)
	_, _, err = installOne(t, root, "priv", "#!"+filepath.Join(priv, "sh")+"\necho hi\n", "    run: [scripts/t.sh]\n")
	if err == nil || !strings.Contains(err.Error(), "has mode 0700; allow others to pass through it (chmod o+x "+priv+")") {
		t.Fatalf("%v", err)
	}
	os.Chmod(priv, 0o711)
	reg, _, err := installOne(t, root, "priv2", "#!"+filepath.Join(priv, "sh")+"\necho hi\n", "    run: [scripts/t.sh]\n")
	if err != nil {
		t.Fatal(err)
	}
	if res, err := call(t, reg, "priv2/t", `{}`); err != nil || res.Text != "hi" {
		t.Fatalf("reachable: %q, %v", res.Text, err)
	}
}
