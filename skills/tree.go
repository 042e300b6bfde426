package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"slices"
	"strings"
	"syscall"
	"unicode"
)

// Files of clawedge's own in a skill folder, outside what is signed.
const (
	SignatureFile = ".clawedge-signature" // written by Sign
	RecordFile    = ".clawedge-install"   // written by Install: what was installed, from where, granted or not
)

// File is one regular file of a skill folder.
type File struct {
	Path   string // slash-separated, inside the folder
	Size   int64
	Exec   bool   // executable by its owner
	SHA256 string // hex
	data   []byte // kept only when asked (readTree's keep)
}

// Tree is a skill folder's files in path order, without SignatureFile and RecordFile.
type Tree struct {
	Files []File
}

// File finds p in t.
func (t Tree) File(p string) (File, bool) {
	i, ok := slices.BinarySearchFunc(t.Files, p, func(f File, p string) int { return strings.Compare(f.Path, p) })
	if !ok {
		return File{}, false
	}
	return t.Files[i], true
}

// readTree reads dir as a skill folder: only folders and regular files, no
// symlinks (not even pointing inside: a link is a path the reader of the
// folder does not see), no devices, pipes or sockets, names without control
// characters, and the bounds of limits.go. Files are read through an
// os.Root with O_NOFOLLOW, so a file swapped for a link while reading is
// refused too. keep says which files' contents to keep in memory.
func readTree(dir string, keep func(p string) bool) (Tree, error) {
	var t Tree
	root, err := os.OpenRoot(dir)
	if err != nil {
		return t, err
	}
	defer root.Close()
	var total int64
	seen := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if seen++; seen > 4*MaxFiles {
			return fmt.Errorf("more than %d entries (folders and files)", 4*MaxFiles)
		}
		if err := checkName(p); err != nil {
			return err
		}
		if strings.Count(p, "/") > MaxDepth {
			return fmt.Errorf("%s: more than %d folders deep", p, MaxDepth)
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, _ := root.Readlink(p)
			return fmt.Errorf("%s is a symlink (to %q): a skill holds only folders and regular files", p, target)
		case e.IsDir():
			return nil
		case !e.Type().IsRegular():
			return fmt.Errorf("%s is not a regular file (%s): a skill holds only folders and regular files", p, e.Type())
		}
		if !strings.Contains(p, "/") && (p == SignatureFile || p == RecordFile) {
			return nil
		}
		if len(t.Files) == MaxFiles {
			return fmt.Errorf("more than %d files", MaxFiles)
		}
		f, err := hashFile(root, p, keep != nil && keep(p))
		if err != nil {
			return err
		}
		if total += f.Size; total > MaxTotalBytes {
			return fmt.Errorf("more than %d bytes in all (at %s)", MaxTotalBytes, p)
		}
		t.Files = append(t.Files, f)
		return nil
	})
	if err != nil {
		return t, err
	}
	slices.SortFunc(t.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return t, nil
}

func hashFile(root *os.Root, p string, keep bool) (File, error) {
	fh, err := root.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return File{}, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return File{}, err
	}
	if !st.Mode().IsRegular() {
		return File{}, fmt.Errorf("%s is not a regular file", p)
	}
	// A hard link is a second path to the same file, outside what the
	// reader of the folder sees: written through there, it changes the
	// skill. Refused as in an archive.
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
		return File{}, fmt.Errorf("%s has %d hard links: a skill holds only folders and regular files of its own (copy it instead of linking it)", p, sys.Nlink)
	}
	if st.Size() > MaxFileBytes {
		return File{}, fmt.Errorf("%s: %d bytes, more than %d", p, st.Size(), MaxFileBytes)
	}
	h := sha256.New()
	var w io.Writer = h
	var buf strings.Builder
	if keep {
		w = io.MultiWriter(h, &buf)
	}
	n, err := io.Copy(w, io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", p, err)
	}
	if n > MaxFileBytes {
		return File{}, fmt.Errorf("%s: more than %d bytes", p, MaxFileBytes)
	}
	f := File{Path: p, Size: n, Exec: st.Mode()&0o100 != 0, SHA256: hex.EncodeToString(h.Sum(nil))}
	if keep {
		f.data = []byte(buf.String())
	}
	return f, nil
}

// checkName refuses paths a manifest line or a terminal could be fooled by.
func checkName(p string) error {
	if len(p) > MaxPathBytes {
		return fmt.Errorf("%q: a path longer than %d bytes", abbrev(p), MaxPathBytes)
	}
	for _, c := range p {
		if unicode.IsControl(c) || c == '\\' || c == unicode.ReplacementChar {
			return fmt.Errorf("%q: a file name with a control character, a backslash or invalid UTF-8", p)
		}
	}
	for _, part := range strings.Split(p, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("%q: not a clean path", p)
		}
	}
	return nil
}

// diff names the first difference between what was signed or installed
// (want) and what is on disk (got), or returns nil.
func diff(want, got Tree) error {
	for _, w := range want.Files {
		g, ok := got.File(w.Path)
		switch {
		case !ok:
			return fmt.Errorf("%s is missing", w.Path)
		case g.SHA256 != w.SHA256 || g.Size != w.Size:
			return fmt.Errorf("%s changed (sha256 %s, signed %s)", w.Path, short(g.SHA256), short(w.SHA256))
		case g.Exec != w.Exec:
			return fmt.Errorf("%s changed mode (executable %v, signed %v)", w.Path, g.Exec, w.Exec)
		}
	}
	for _, g := range got.Files {
		if _, ok := want.File(g.Path); !ok {
			return fmt.Errorf("%s was added", g.Path)
		}
	}
	return nil
}

func short(h string) string { return h[:min(12, len(h))] }

// ErrTampered wraps a difference between a skill's files and its signature or install record.
var ErrTampered = errors.New("the skill's files are not what was signed or installed")
