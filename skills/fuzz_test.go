package skills

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The front matter of a SKILL.md written by a stranger: never a panic, a
// hang or an unbounded allocation; what is accepted has a valid name and a
// description.
func FuzzParseSkillMD(f *testing.F) {
	f.Add([]byte("---\nname: ok\ndescription: fine\n---\nbody\n"))
	f.Add([]byte("---\nname: pdf\ndescription: >\n  folded\nmetadata: {version: 1.0, a: b}\nallowed-tools: Read Bash\n---\n"))
	f.Add([]byte("---\nname: a\ndescription: &x [*x, *x]\n---\n"))
	f.Add([]byte("---\r\nname: x\r\ndescription: y\r\n---"))
	f.Add([]byte("\ufeff---\nname: x\ndescription: !!binary aGk=\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := ParseSkillMD(data)
		if err != nil {
			return
		}
		if CheckName(m.Name) != nil || m.Description == "" {
			t.Fatalf("accepted %+v", m)
		}
	})
}

// tools.yaml written by a stranger: what is accepted runs a program inside
// the folder, with whole-argument parameters and clean absolute paths.
func FuzzParseTools(f *testing.F) {
	f.Add([]byte(goodTools))
	f.Add([]byte("tools:\n  - name: x\n    run: [scripts/x]\n"))
	f.Add([]byte("tools:\n  - {name: x, run: [a, \"{p}\"], params: [{name: p, type: string, enum: [a]}], read: [/a], write: [/b], network: true, timeout: 1s}\n"))
	f.Add([]byte("tools: [{name: x, run: ['../x']}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := ParseTools("fz", data)
		if err != nil {
			return
		}
		for _, d := range ds {
			if checkRelPath(d.Run[0]) != nil || d.Timeout <= 0 || d.Timeout > MaxTimeout {
				t.Fatalf("accepted %+v", d)
			}
			for _, a := range d.Run[1:] {
				if _, ok := placeholder(a); !ok && strings.ContainsAny(a, "{}") {
					t.Fatalf("accepted a partial placeholder %q", a)
				}
			}
			for _, p := range append(append([]string{}, d.Read...), d.Write...) {
				if !strings.HasPrefix(p, "/") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..") {
					t.Fatalf("accepted the path %q", p)
				}
			}
		}
	})
}

// A script's first bytes, written by a stranger: what is accepted is the
// interpreter as one blank-free word and an argument without a line end,
// as Linux would read them.
func FuzzParseShebang(f *testing.F) {
	f.Add([]byte("#!/bin/sh\necho\n"))
	f.Add([]byte("#! /usr/bin/env  bash \t\n"))
	f.Add([]byte("#!/usr/bin/env -S bash -e\n"))
	f.Add([]byte("#!/bin/sh\r\n"))
	f.Add([]byte("#!\t\n"))
	f.Add([]byte("\x7fELF\x02\x01\x01"))
	f.Fuzz(func(t *testing.T, head []byte) {
		interp, arg, ok, err := parseShebang(head)
		if !ok || err != nil {
			if ok == bytes.HasPrefix(head, []byte("#!")) {
				return
			}
			t.Fatalf("ok %v for %q", ok, head)
		}
		if interp == "" || strings.ContainsAny(interp, " \t\n\r\x00") || strings.ContainsAny(arg, "\n\r\x00") ||
			strings.TrimSpace(arg) != arg || !bytes.Contains(head[:min(len(head), maxShebang)], []byte(interp)) {
			t.Fatalf("%q read as %q %q", head, interp, arg)
		}
	})
}

// A failed program's stderr, which says anything it likes: what is taken
// from it is a clean absolute path or a program name, a few of them, each
// once, and only from lines that say "Permission denied".
func FuzzDeniedPaths(f *testing.F) {
	f.Add([]byte("cat: /etc/x: Permission denied\n"))
	f.Add([]byte("/s/t.sh: line 3: /usr/bin/cat: Permission denied\n/s/t.sh: 3: cat: Permission denied\n"))
	f.Add([]byte("ls: cannot open directory '/a b': Permission denied\n"))
	f.Add([]byte("PermissionError: [Errno 13] Permission denied: '/etc/x'\n"))
	f.Add([]byte("/usr/bin/env: ‘bash’: Permission denied\n"))
	f.Add([]byte(": Permission denied: \n'': Permission denied\n"))
	f.Add([]byte("cp: cannot open '/x' for reading: Permission denied\np: error while loading shared libraries: libx.so: cannot open shared object file: Permission denied\n"))
	f.Fuzz(func(t *testing.T, stderr []byte) {
		got := deniedPaths(stderr)
		if len(got) > maxDeniedPaths {
			t.Fatalf("%d paths", len(got))
		}
		if len(got) > 0 && !bytes.Contains(stderr, []byte("Permission denied")) {
			t.Fatalf("%q from %q", got, stderr)
		}
		for i, p := range got {
			if slices.Contains(got[:i], p) {
				t.Fatalf("%q twice", p)
			}
			if !(filepath.IsAbs(p) && filepath.Clean(p) == p || isProgramName(p)) {
				t.Fatalf("%q from %q", p, stderr)
			}
			if strings.ContainsFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f }) {
				t.Fatalf("a control character in %q", p)
			}
		}
	})
}

// A skill's own program, a stranger's ELF file: its headers are read
// without a panic, and what is taken is a clean absolute loader path and
// bounded library names.
func FuzzReadELF(f *testing.F) {
	if b, err := os.ReadFile("/usr/bin/true"); err == nil && len(b) < 1<<20 {
		f.Add(b[:min(len(b), 16<<10)])
	}
	if b, err := os.ReadFile(filepath.Join("testdata", "elf", "prog-amd64")); err == nil {
		f.Add(b) // a RUNPATH with $ORIGIN
	}
	f.Add([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x3e\x00"))
	f.Add([]byte("\x7fELF\x01\x01\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := readELF(bytes.NewReader(data))
		if err != nil {
			return
		}
		if testing.Verbose() {
			t.Logf("loader %q, libraries %q", info.interp, info.needed)
		}
		if info.interp != "" && (!filepath.IsAbs(info.interp) || filepath.Clean(info.interp) != info.interp) {
			t.Fatalf("loader %q", info.interp)
		}
		if len(info.needed) > maxLibs || len(info.runpath) > 16 {
			t.Fatalf("%d libraries, %d library folders", len(info.needed), len(info.runpath))
		}
		for _, d := range runDirs(info, "/skill/scripts") {
			if !filepath.IsAbs(d) || filepath.Clean(d) != d || strings.Contains(d, "$") {
				t.Fatalf("library folder %q", d)
			}
		}
		for _, n := range info.needed {
			if n == "" || len(n) > 255 || strings.ContainsRune(n, 0) {
				t.Fatalf("library %q", n)
			}
		}
	})
}
