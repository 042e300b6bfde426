package skills

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/clawedge/clawedge/sandbox"
)

// ScriptPATH is the PATH of every script tool: where `#!/usr/bin/env NAME`
// finds NAME, at install and before each run, and the program's own PATH,
// so that env finds the very file that was granted.
const ScriptPATH = "/usr/local/bin:/usr/bin:/bin"

// maxShebang is what Linux reads of a script to find its interpreter
// (BINPRM_BUF_SIZE): the #! line must end within it.
const maxShebang = 256

// Bounds of resolving one program's loader and libraries.
const (
	maxLibs      = 64      // libraries of one program, all levels
	maxELFHeader = 1 << 20 // bytes of headers and dynamic section read
	// maxDynStr bounds the dynamic string table read: node's holds 5.3 MB
	// of exported symbol names before its few library names.
	maxDynStr = 32 << 20
)

// Launch is how the kernel starts a tool's program, and the files the
// sandbox must let it execute for that: a script's interpreter (for
// `#!/usr/bin/env NAME`, env and NAME), each with the ELF loader and the
// libraries it needs. Nothing else is granted: whatever the program then
// reads or runs, its tool declares.
type Launch struct {
	Shebang string // the #! line as written ("" for an ELF program)
	Interp  string // the interpreter the line names, as written
	Arg     string // its one optional argument, as Linux passes it
	Env     string // for env: the program env runs, resolved on ScriptPATH
	// Grants are real paths (no symlinks), each read and executed by the
	// program's start: the interpreter (env and its program), then the
	// loader and libraries of each, in the order found.
	Grants []string
}

// Describe is the launch in one line, for the install plan.
func (l Launch) Describe() string {
	if l.Shebang == "" {
		if len(l.Grants) == 0 {
			return "itself (a static ELF program)"
		}
		return fmt.Sprintf("itself (an ELF program), granted its loader and libraries: %s", strings.Join(l.Grants, ", "))
	}
	return fmt.Sprintf("%s, granted %s", l.Shebang, strings.Join(l.Grants, ", "))
}

// parseShebang reads the interpreter and its argument from a script's
// first bytes as Linux does (fs/binfmt_script.c): after "#!", blanks
// (spaces and tabs) are skipped, the interpreter runs to the next blank,
// and the rest of the line, blanks around it trimmed, is ONE argument,
// however many words it holds. ok is false when head does not start with
// "#!". The line must end within the 256 bytes Linux reads.
func parseShebang(head []byte) (interp, arg string, ok bool, err error) {
	if !bytes.HasPrefix(head, []byte("#!")) {
		return "", "", false, nil
	}
	head = head[:min(len(head), maxShebang)]
	end := bytes.IndexByte(head, '\n')
	if end < 0 {
		return "", "", true, fmt.Errorf("its #! line does not end within the first %d bytes, all that Linux reads of it", maxShebang)
	}
	line := string(head[2:end])
	if strings.HasSuffix(line, "\r") {
		return "", "", true, errors.New(`its #! line ends with "\r" (Windows line ends): Linux would look for an interpreter whose name ends in "\r"; save it with Unix line ends`)
	}
	if strings.ContainsFunc(line, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
		return "", "", true, errors.New("its #! line holds a control character")
	}
	line = strings.Trim(line, " \t")
	interp, arg, _ = strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
	if interp == "" {
		return "", "", true, errors.New("its #! line names no interpreter")
	}
	// The argument as the kernel passes it: what follows the interpreter,
	// blanks trimmed, tabs kept inside.
	arg = strings.Trim(line[len(interp):], " \t")
	return interp, arg, true, nil
}

// readLaunch says how the program at path (run[0] of a tool, in the skill
// folder) starts, and resolves what it needs on this board. head is the
// program's first bytes; open opens it as an ELF file when it is one;
// origin is its folder (an ELF program's $ORIGIN).
// declared are the tool's read paths: a library found beneath one needs no
// grant of its own.
func readLaunch(head []byte, open func() (io.ReaderAt, error), origin string, declared []string) (Launch, error) {
	interp, arg, ok, err := parseShebang(head)
	if err != nil {
		return Launch{}, err
	}
	if !ok {
		if !bytes.HasPrefix(head, []byte(elf.ELFMAG)) {
			return Launch{}, errors.New("it has no #! line and is not an ELF program, so Linux cannot start it: make its first line name its interpreter, such as #!/bin/sh")
		}
		r, err := open()
		if err != nil {
			return Launch{}, err
		}
		info, err := readELF(r)
		if err != nil {
			return Launch{}, fmt.Errorf("the program: %w", err)
		}
		var l Launch
		if err := l.addELF(info, "the program", origin, declared); err != nil {
			return Launch{}, err
		}
		return l, nil
	}
	l := Launch{Shebang: "#!" + strings.TrimRight(string(head[2:bytes.IndexByte(head, '\n')]), " \t"), Interp: interp, Arg: arg}
	if !filepath.IsAbs(interp) || filepath.Clean(interp) != interp {
		return Launch{}, fmt.Errorf("%s: the interpreter %q is not an absolute, clean path", l.Shebang, interp)
	}
	if err := l.addProgram(interp, declared); err != nil {
		return Launch{}, fmt.Errorf("%s: %w", l.Shebang, err)
	}
	if filepath.Base(interp) != "env" {
		return l, nil
	}
	// `#!/usr/bin/env NAME`: Linux passes env one argument, the whole rest
	// of the line; env then runs NAME from PATH. Options (-S splits that
	// argument into several) and variables are refused rather than
	// emulated: the interpreter's own path says the same thing plainly.
	switch {
	case arg == "":
		return Launch{}, fmt.Errorf("%s names no program for env to run", l.Shebang)
	case strings.HasPrefix(arg, "-"):
		return Launch{}, fmt.Errorf("%s: env options such as -S are not supported: write the interpreter's path and its argument, such as #!/usr/bin/bash -e", l.Shebang)
	case strings.ContainsAny(arg, " \t"):
		return Launch{}, fmt.Errorf("%s: Linux passes %q to env as ONE program name; write the interpreter's path instead, such as #!/usr/bin/%s", l.Shebang, arg, strings.Fields(arg)[0])
	case strings.Contains(arg, "="):
		return Launch{}, fmt.Errorf("%s: env would read %q as a variable, not as the program to run", l.Shebang, arg)
	}
	prog := arg
	if !strings.Contains(arg, "/") {
		if prog, err = lookPath(arg); err != nil {
			return Launch{}, fmt.Errorf("%s: %w", l.Shebang, err)
		}
	} else if !filepath.IsAbs(arg) || filepath.Clean(arg) != arg {
		return Launch{}, fmt.Errorf("%s: %q is not a program name nor an absolute, clean path", l.Shebang, arg)
	}
	l.Env = prog
	if err := l.addProgram(prog, declared); err != nil {
		return Launch{}, fmt.Errorf("%s: %w", l.Shebang, err)
	}
	return l, nil
}

// lookPath finds name on ScriptPATH as env would: the first regular file
// with an execute bit.
func lookPath(name string) (string, error) {
	for _, dir := range filepath.SplitList(ScriptPATH) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("no program %q on this board in %s (the PATH of script tools)", name, ScriptPATH)
}

// addProgram grants the interpreter at p (its real file: /bin/sh is
// /usr/bin/dash on a merged-/usr Debian) with its loader and libraries.
func (l *Launch) addProgram(p string, declared []string) error {
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("the interpreter %s does not exist on this board", p)
	}
	fi, err := os.Stat(real)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return fmt.Errorf("the interpreter %s is not a regular file", p)
	case fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("the interpreter %s (%s) is not executable (mode %04o)", p, real, fi.Mode().Perm())
	case os.Geteuid() == 0 && fi.Mode().Perm()&0o001 == 0:
		return fmt.Errorf("the interpreter %s (%s) has mode %04o: a root daemon's skill programs run as an unprivileged uid, which may not execute it", p, real, fi.Mode().Perm())
	}
	if err := Reachable(filepath.Dir(real), os.Geteuid()); err != nil {
		return fmt.Errorf("the interpreter %s (%s): %w", p, real, err)
	}
	info, err := boardELF(real)
	if errors.Is(err, errNotELF) {
		return fmt.Errorf("the interpreter %s (%s) is not an ELF program (an interpreter that is itself a script is not supported: name the one it runs)", p, real)
	}
	if err != nil {
		return fmt.Errorf("the interpreter %s: %w", real, err)
	}
	l.grant(real)
	return l.addELF(info, "the interpreter "+real, filepath.Dir(real), declared)
}

var errNotELF = errors.New("not an ELF file")

// elfCache keeps the headers read of the board's programs and libraries,
// by real path, for as long as the file is the same one (device, inode,
// size, modification and change times: a file replaced or written since is
// read again). Resolving bash's start reads four ELF files; before every
// run, that was milliseconds a call on a small board pays for nothing.
var elfCache = struct {
	sync.Mutex
	m map[string]cachedELF
}{m: map[string]cachedELF{}}

type cachedELF struct {
	id   [5]int64
	info elfInfo
	err  error
}

const maxELFCache = 256

// boardELF reads the ELF headers of the board's file at the real path p.
func boardELF(p string) (elfInfo, error) {
	f, err := os.Open(p)
	if err != nil {
		return elfInfo{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return elfInfo{}, err
	}
	if !fi.Mode().IsRegular() {
		return elfInfo{}, fmt.Errorf("%s is not a regular file", p)
	}
	var id [5]int64
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = [5]int64{int64(st.Dev), int64(st.Ino), st.Size, st.Mtim.Nano(), st.Ctim.Nano()}
	}
	elfCache.Lock()
	c, ok := elfCache.m[p]
	elfCache.Unlock()
	if ok && c.id == id && id != [5]int64{} {
		return c.info, c.err
	}
	var magic [4]byte
	var info elfInfo
	if _, err = f.ReadAt(magic[:], 0); err != nil || string(magic[:]) != elf.ELFMAG {
		err = errNotELF
	} else {
		info, err = readELF(f)
	}
	elfCache.Lock()
	if len(elfCache.m) >= maxELFCache {
		clear(elfCache.m)
	}
	elfCache.m[p] = cachedELF{id: id, info: info, err: err}
	elfCache.Unlock()
	return info, err
}

func (l *Launch) grant(p string) {
	if !slices.Contains(l.Grants, p) {
		l.Grants = append(l.Grants, p)
	}
}

// addELF grants the loader (PT_INTERP) and the libraries (DT_NEEDED, each
// one's own, and so on) of the ELF program r, found as the loader finds
// them without its cache: the library folders of the program's machine.
// The standard library folders are readable by every sandboxed program
// already (the loader's own search, hwcaps variants included); naming the
// libraries too keeps the grant exact should that change. A library found
// only beneath a folder the tool declares needs no grant; one found
// nowhere is an error naming it.
func (l *Launch) addELF(info elfInfo, what, origin string, declared []string) error {
	if info.interp != "" {
		real, err := filepath.EvalSymlinks(info.interp)
		if err != nil {
			return fmt.Errorf("%s needs the loader %s, which this board does not have (built for another machine or libc?)", what, info.interp)
		}
		l.grant(real)
	}
	std := libDirs(info)
	type need struct {
		name string
		dirs []string // where the object that needs it says to look first
	}
	var queue []need
	push := func(lib elfInfo, origin string) {
		dirs := runDirs(lib, origin)
		for _, n := range lib.needed {
			queue = append(queue, need{n, dirs})
		}
	}
	push(info, origin)
	seen := map[string]bool{}
	for len(queue) > 0 {
		name, dirs := queue[0].name, slices.Concat(queue[0].dirs, std)
		queue = queue[1:]
		if seen[name] {
			continue
		}
		seen[name] = true
		if len(seen) > maxLibs {
			return fmt.Errorf("%s needs more than %d libraries", what, maxLibs)
		}
		if strings.Contains(name, "/") {
			return fmt.Errorf("%s needs the library %q by path, which is not supported", what, name)
		}
		p, lib, err := findLib(name, dirs, info)
		if err != nil {
			return err
		}
		if p == "" {
			if findDeclared(name, declared) != "" {
				continue // readable through the tool's own read: paths
			}
			return fmt.Errorf("%s needs the library %s, which is in none of %s: if the program finds it elsewhere, declare that folder in tools.yaml (read: [/its/folder])", what, name, strings.Join(dirs, ", "))
		}
		l.grant(p)
		push(lib, filepath.Dir(p))
	}
	return nil
}

// elfInfo is what starting an ELF program needs from its headers.
type elfInfo struct {
	class   elf.Class
	machine elf.Machine
	flags   uint32 // e_flags: ARM's hard-float ABI
	interp  string // PT_INTERP, "" for a static program
	needed  []string
	runpath []string // DT_RUNPATH (or DT_RPATH) folders, $ORIGIN unexpanded
}

// runDirs are the folders the RUNPATH of lib names, $ORIGIN being origin,
// the folder lib is in: absolute, clean, each once; others are skipped
// (a relative folder is relative to wherever the program is started).
func runDirs(lib elfInfo, origin string) []string {
	var dirs []string
	for _, d := range lib.runpath {
		if origin == "" && strings.Contains(d, "ORIGIN") {
			continue
		}
		d = strings.ReplaceAll(strings.ReplaceAll(d, "${ORIGIN}", origin), "$ORIGIN", origin)
		if !filepath.IsAbs(d) || strings.Contains(d, "$") {
			continue
		}
		if d = filepath.Clean(d); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// readELF reads the headers of an ELF file from outside (a skill's own
// program is a stranger's): bounded, and never a panic.
func readELF(r io.ReaderAt) (info elfInfo, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("not a valid ELF file (%v)", p)
		}
	}()
	f, err := elf.NewFile(r)
	if err != nil {
		return info, fmt.Errorf("not a valid ELF file: %v", err)
	}
	defer f.Close()
	info.class, info.machine = f.Class, f.Machine
	if f.Machine == elf.EM_ARM && f.Class == elf.ELFCLASS32 {
		// e_flags, which debug/elf does not keep: hard or soft float.
		var b [4]byte
		if _, err := r.ReadAt(b[:], 36); err == nil {
			info.flags = f.ByteOrder.Uint32(b[:])
		}
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return info, fmt.Errorf("not an ELF program or library (type %s)", f.Type)
	}
	if len(f.Progs) > 256 {
		return info, fmt.Errorf("%d program headers", len(f.Progs))
	}
	for _, p := range f.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		if p.Filesz == 0 || p.Filesz > 4096 {
			return info, fmt.Errorf("its loader's name (PT_INTERP) is %d bytes long", p.Filesz)
		}
		b := make([]byte, p.Filesz)
		if _, err := p.ReadAt(b, 0); err != nil {
			return info, fmt.Errorf("reading PT_INTERP: %v", err)
		}
		info.interp = string(bytes.TrimRight(b, "\x00"))
		if !filepath.IsAbs(info.interp) || filepath.Clean(info.interp) != info.interp || strings.ContainsRune(info.interp, 0) {
			return info, fmt.Errorf("its loader %q is not an absolute, clean path", info.interp)
		}
	}
	if s := f.Section(".dynamic"); s != nil && s.Size > maxELFHeader {
		return info, fmt.Errorf("a dynamic section of %d bytes", s.Size)
	}
	if s := f.Section(".dynstr"); s != nil && s.Size > maxDynStr {
		return info, fmt.Errorf("a dynamic string table of %d bytes", s.Size)
	}
	for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
		paths, err := f.DynString(tag)
		if err != nil {
			return info, fmt.Errorf("reading its library path: %v", err)
		}
		for _, p := range paths {
			info.runpath = append(info.runpath, strings.Split(p, ":")...)
		}
		if len(info.runpath) > 0 {
			break // RUNPATH, when there is one, replaces RPATH
		}
	}
	if len(info.runpath) > 16 {
		return info, fmt.Errorf("%d library folders in its RUNPATH", len(info.runpath))
	}
	needed, err := f.DynString(elf.DT_NEEDED)
	if err != nil {
		return info, fmt.Errorf("reading its libraries: %v", err)
	}
	if len(needed) > maxLibs {
		return info, fmt.Errorf("more than %d libraries", maxLibs)
	}
	for _, n := range needed {
		if n == "" || strings.ContainsRune(n, 0) || len(n) > 255 {
			return info, fmt.Errorf("a library name %q", n)
		}
	}
	info.needed = needed
	return info, nil
}

// multiarch is the Debian multiarch folder of a machine ("" when unknown).
func multiarch(info elfInfo) string {
	switch {
	case info.machine == elf.EM_X86_64 && info.class == elf.ELFCLASS64:
		return "x86_64-linux-gnu"
	case info.machine == elf.EM_AARCH64:
		return "aarch64-linux-gnu"
	case info.machine == elf.EM_ARM && info.flags&0x400 != 0: // EF_ARM_ABI_FLOAT_HARD
		return "arm-linux-gnueabihf"
	case info.machine == elf.EM_ARM:
		return "arm-linux-gnueabi"
	case info.machine == elf.EM_386:
		return "i386-linux-gnu"
	case info.machine == elf.EM_RISCV && info.class == elf.ELFCLASS64:
		return "riscv64-linux-gnu"
	}
	return ""
}

// libDirs are the folders the loader searches by default for a program of
// this machine, the multiarch ones first, as Debian's glibc does.
func libDirs(info elfInfo) []string {
	var dirs []string
	if ma := multiarch(info); ma != "" {
		dirs = append(dirs, "/lib/"+ma, "/usr/lib/"+ma)
	}
	if info.class == elf.ELFCLASS64 {
		dirs = append(dirs, "/lib64", "/usr/lib64")
	}
	return append(dirs, "/lib", "/usr/lib")
}

// findLib finds the library name in dirs: the first regular ELF file of
// the program's class and machine (the loader skips others), as a real
// path. "" when none holds it.
func findLib(name string, dirs []string, want elfInfo) (string, elfInfo, error) {
	for _, d := range dirs {
		p, err := filepath.EvalSymlinks(filepath.Join(d, name))
		if err != nil {
			continue
		}
		info, err := boardELF(p)
		if err != nil || info.class != want.class || info.machine != want.machine {
			continue
		}
		return p, info, nil
	}
	return "", elfInfo{}, nil
}

// findDeclared says which of the declared folders holds the library name.
func findDeclared(name string, declared []string) string {
	for _, d := range declared {
		if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() {
			return d
		}
	}
	return ""
}

// ProgramLaunch reads how the kernel starts the program at path: the files
// its #! line (or its ELF headers) make it execute, which a sandbox grants.
// declared are the folders its caller already grants, where a library may
// also be found. Any code that is not ours and is run confined starts so: a
// skill's script, an MCP server's program (`npx` is a script for env and
// node).
func ProgramLaunch(path string, declared []string) (Launch, error) {
	return programLaunch(path, declared)
}

// programLaunch reads the launch of the program at path, a file of the
// skill folder on disk.
func programLaunch(path string, declared []string) (Launch, error) {
	f, err := os.Open(path)
	if err != nil {
		return Launch{}, err
	}
	defer f.Close()
	head := make([]byte, maxShebang)
	n, err := io.ReadFull(f, head)
	if err != nil && n == 0 && !errors.Is(err, io.EOF) {
		return Launch{}, err
	}
	return readLaunch(head[:n], func() (io.ReaderAt, error) { return f, nil }, filepath.Dir(path), declared)
}

// maxLinkScan bounds the entries of one declared folder looked at for links.
const maxLinkScan = 256

// linksOut are the notes for the owner about d's declared read folders:
// entries that are symlinks to a path the tool neither declares nor may
// read otherwise (its folder, what its start is granted). Landlock follows
// the link and checks where it lands, so a read through one is denied: the
// probes of /sys/bus/w1/devices are links into /sys/devices/w1_bus_master1.
// A note, not a refusal: the program may never follow them (/dev holds
// many). Links into one folder are summed up as that folder.
func linksOut(d ToolDecl, dir string, l Launch) []string {
	allowed := append(append(append([]string{dir}, d.Read...), d.Write...), l.Grants...)
	var notes []string
	for _, p := range d.Read {
		entries, err := os.ReadDir(p)
		if err != nil {
			continue // a file, or missing on this board
		}
		type link struct{ name, target string }
		byDir := map[string][]link{} // by the target's folder
		var order []string
		for i, e := range entries {
			if i == maxLinkScan {
				break
			}
			if e.Type()&os.ModeSymlink == 0 {
				continue
			}
			target, err := filepath.EvalSymlinks(filepath.Join(p, e.Name()))
			if err != nil || slices.ContainsFunc(allowed, func(a string) bool { return sandbox.Within(target, a) }) {
				continue
			}
			td := filepath.Dir(target)
			if byDir[td] == nil {
				order = append(order, td)
			}
			byDir[td] = append(byDir[td], link{e.Name(), target})
		}
		for _, td := range order {
			links := byDir[td]
			grant := td
			if len(links) == 1 {
				grant = links[0].target
			}
			var shown []string
			for _, k := range links[:min(len(links), 2)] {
				shown = append(shown, k.name+" -> "+k.target)
			}
			more := ""
			if len(links) > 2 {
				more = fmt.Sprintf(" and %d more", len(links)-2)
			}
			notes = append(notes, fmt.Sprintf("tool %s reads %s, where %s%s lead outside what it declares: reads through them are denied unless it declares read: [%s]",
				d.Name, p, strings.Join(shown, ", "), more, grant))
		}
	}
	return notes
}
