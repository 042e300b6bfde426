package skills

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/clawedge/clawedge/sandbox"
)

// Bounds of reading a failed run's stderr for what was denied.
const (
	maxDeniedScan  = 64 << 10 // bytes of stderr looked at
	maxDeniedPaths = 4        // paths named in one error
)

// deniedPaths reads the paths a program's stderr says were refused with
// "Permission denied", as the common tools write it:
//
//	cat: /etc/x: Permission denied                  (coreutils, busybox)
//	ls: cannot open directory '/etc/x': Permission denied
//	./x.sh: line 3: /usr/bin/cat: Permission denied  (bash: a program or a redirect)
//	./x.sh: 3: cat: Permission denied               (dash: a program by the name it was called)
//	./x.sh: 2: cannot open /etc/x: Permission denied (dash: a redirect)
//	PermissionError: [Errno 13] Permission denied: '/etc/x'  (Python)
//
// Each is an absolute path or a bare program name (to look up on the PATH),
// at most maxDeniedPaths of them, each once, in the order written. The text
// is the program's, which may say anything: nothing here is trusted beyond
// naming a path in an error.
func deniedPaths(stderr []byte) []string {
	stderr = stderr[:min(len(stderr), maxDeniedScan)]
	var out []string
	for _, line := range bytes.Split(stderr, []byte("\n")) {
		if len(out) == maxDeniedPaths {
			break
		}
		s := string(line)
		i := strings.Index(s, "Permission denied")
		if i < 0 || strings.Contains(s, "error while loading shared libraries") {
			continue // the loader names a library, not its path (deniedLibrary)
		}
		var tok string
		if after := strings.TrimLeft(s[i+len("Permission denied"):], " "); strings.HasPrefix(after, ":") {
			tok = quoted(strings.TrimSpace(after[1:]), true)
		}
		if tok == "" {
			before := strings.TrimRight(s[:i], " ")
			if !strings.HasSuffix(before, ":") {
				continue
			}
			before = strings.TrimSuffix(before, ":")
			if j := strings.LastIndex(before, ": "); j >= 0 {
				before = before[j+2:]
			}
			tok = quoted(strings.TrimSpace(before), false)
		}
		if tok == "" || slices.Contains(out, tok) {
			continue
		}
		out = append(out, tok)
	}
	return out
}

// quoted returns the path or program name a part of a message names: a
// quoted string ('...', "...", ‘...’ or `...'), the first one when the
// part follows "Permission denied" and the last when it precedes it, else
// a word that is an absolute path, else the part itself when it is one
// word (dash names a program so: "cat: Permission denied"). Other words
// ("cp: cannot open '/x' for reading") are prose, never taken for names.
// "" when it names nothing.
func quoted(s string, first bool) string {
	var found []string
	for _, q := range [][2]string{{"'", "'"}, {`"`, `"`}, {"‘", "’"}, {"`", "'"}} {
		rest := s
		for {
			i := strings.Index(rest, q[0])
			if i < 0 {
				break
			}
			j := strings.Index(rest[i+len(q[0]):], q[1])
			if j < 0 {
				break
			}
			found = append(found, rest[i+len(q[0]):i+len(q[0])+j])
			rest = rest[i+len(q[0])+j+len(q[1]):]
		}
		if len(found) > 0 {
			break
		}
	}
	words := strings.Fields(s)
	var tok string
	switch {
	case len(found) > 0 && first:
		tok = found[0]
	case len(found) > 0:
		tok = found[len(found)-1]
	case len(words) == 1:
		tok = words[0]
	default:
		for _, w := range words {
			if strings.HasPrefix(w, "/") {
				tok = w
				if first {
					break
				}
			}
		}
	}
	switch {
	case len(tok) > 4096 || strings.ContainsFunc(tok, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return ""
	case filepath.IsAbs(tok):
		return filepath.Clean(tok)
	case isProgramName(tok):
		return tok
	}
	return ""
}

func isProgramName(s string) bool {
	if s == "" || len(s) > 255 || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)) {
			return false
		}
	}
	return true
}

// explainDenied turns what a failed run's stderr says was denied into what
// to do about it: each path, as the sandbox sees it (its real path, where
// a symlink led), and the tools.yaml line that grants it, or, for a path
// the tool already may read, that its file permissions are what refuse it.
// "" when stderr names no path.
func (t *scriptTool) explainDenied(stderr []byte, launch Launch) string {
	var parts []string
	for _, tok := range deniedPaths(stderr) {
		p := tok
		if !strings.Contains(tok, "/") {
			found, err := lookPath(tok)
			if err != nil {
				continue // not a program of this board: a word of the message
			}
			p = found
		}
		real, exists := realPath(p)
		via := ""
		if real != p {
			via = fmt.Sprintf(" (%s, through a symlink)", p)
		}
		granted := slices.ContainsFunc(append(append(append([]string{t.s.Dir}, t.d.Read...), t.d.Write...), launch.Grants...),
			func(d string) bool { return sandbox.Within(real, d) })
		switch {
		case granted && exists:
			parts = append(parts, fmt.Sprintf("%s%s is declared (or granted for the program's start), so its file permissions refuse it to the uid the program runs as%s", real, via, modeOf(real)))
		case granted:
			parts = append(parts, fmt.Sprintf("%s%s was refused", real, via))
		case !exists:
			parts = append(parts, fmt.Sprintf("%s%s was refused: to create it, add to the tool in tools.yaml: write: [%s]", real, via, filepath.Dir(real)))
		default:
			parts = append(parts, fmt.Sprintf("the sandbox denied %s%s, which the tool does not declare: add to the tool in tools.yaml: read: [%s] (or write: [%s] if it writes there)", real, via, real, real))
		}
	}
	if lib := deniedLibrary(stderr); lib != "" {
		parts = append(parts, fmt.Sprintf("the loader could not open the library %s: if the sandbox denied it, declare the folder that holds it in tools.yaml (read: [/its/folder])", lib))
	}
	return strings.Join(parts, "; ")
}

// deniedLibrary is the library the loader says it could not open for lack
// of permission ("prog: error while loading shared libraries: libx.so.1:
// cannot open shared object file: Permission denied"), or "".
func deniedLibrary(stderr []byte) string {
	const marker = "error while loading shared libraries: "
	for _, line := range bytes.Split(stderr[:min(len(stderr), maxDeniedScan)], []byte("\n")) {
		s := string(line)
		i := strings.Index(s, marker)
		if i < 0 || !strings.Contains(s, "Permission denied") {
			continue
		}
		lib, _, _ := strings.Cut(s[i+len(marker):], ":")
		if isProgramName(lib) {
			return lib
		}
	}
	return ""
}

// realPath is p with every symlink resolved, as Landlock sees it; for a
// path that does not exist, its folder's real path joined with its name.
func realPath(p string) (string, bool) {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real, true
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(dir, filepath.Base(p)), false
	}
	return p, false
}

func modeOf(p string) string {
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf(" (mode %04o)", fi.Mode().Perm())
}
