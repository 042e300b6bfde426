package modelfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clawedge/clawedge/localmodel/gguf"
)

// ErrOutside is a path that is not directly in the models folder.
var ErrOutside = errors.New("not in the models folder")

// ErrNotInstalled is a model that is not in the models folder.
var ErrNotInstalled = errors.New("not installed")

// Installed is one file of the models folder: a model, or the .part of a
// download that has not finished.
type Installed struct {
	File string // name in the folder
	Path string
	Size int64
	// Partial marks a .part file (File keeps the suffix).
	Partial bool
	// From the GGUF header; Err says why it could not be read.
	Architecture, Quantization, Name string
	Parameters                       uint64
	Err                              error
	// Catalog is the catalog entry the file is, if any (by name and size).
	Catalog *Entry
}

// List reads the models folder: *.gguf files (read as GGUF) and *.part
// files, sorted by name. A missing folder is an empty list.
func List(dir string) ([]Installed, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Installed
	for _, de := range ents {
		name := de.Name()
		partial := strings.HasSuffix(name, PartSuffix)
		if !partial && !strings.HasSuffix(strings.ToLower(name), ".gguf") {
			continue
		}
		path := filepath.Join(dir, name)
		st, err := os.Stat(path) // follows a symlink to a model kept elsewhere
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		m := Installed{File: name, Path: path, Size: st.Size(), Partial: partial}
		if !partial {
			if f, err := gguf.Open(path); err != nil {
				m.Err = err
			} else {
				m.Architecture, m.Quantization, m.Name = f.Architecture(), f.Quantization(), f.Name()
				m.Parameters = f.ParameterCount()
			}
			if e, ok := Match(name, m.Size); ok {
				m.Catalog = &e
			}
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out, nil
}

// Resolve maps what a user names to a file path directly inside dir: a
// catalog name, a file name in dir (".gguf" may be left off), or a path
// (anything with a separator, relative to the working folder) to a file
// directly inside dir. Anything that would reach outside dir is ErrOutside.
// The path returned need not exist, and never ends in PartSuffix.
func Resolve(dir, arg string) (string, error) {
	if arg == "" {
		return "", errors.New("no model named")
	}
	if e, ok := Lookup(arg); ok {
		arg = e.File
	}
	p := arg
	if !strings.ContainsAny(arg, `/\`) {
		p = filepath.Join(dir, arg)
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	absP, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	base := filepath.Base(absP)
	if realDir(filepath.Dir(absP)) != realDir(absDir) || base == "." || base == ".." || base == string(filepath.Separator) {
		return "", fmt.Errorf("%s: %w %s", arg, ErrOutside, dir)
	}
	base = strings.TrimSuffix(base, PartSuffix)
	return filepath.Join(dir, base), nil
}

// realDir resolves symlinks in a folder path where it can (data_dir may be a
// link to an SD card or a USB disk).
func realDir(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// Remove deletes an installed model and the .part of its download, named
// as Resolve takes it. It refuses while a download of it runs, and returns
// what it removed; nothing there is ErrNotInstalled.
func Remove(dir, arg string) ([]string, error) {
	target, err := Resolve(dir, arg)
	if err != nil {
		return nil, err
	}
	if !exists(target) && !exists(target+PartSuffix) && !strings.HasSuffix(strings.ToLower(target), ".gguf") {
		target += ".gguf" // "rm tiny" for tiny.gguf
	}
	var removed []string
	for _, p := range []string{target + PartSuffix, target} {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, err
		}
		if st.IsDir() {
			return removed, fmt.Errorf("%s is a folder, not a model file", p)
		}
		if strings.HasSuffix(p, PartSuffix) {
			if err := removeUnlocked(p); err != nil {
				return removed, err
			}
		} else if err := os.Remove(p); err != nil {
			return removed, err
		}
		removed = append(removed, p)
	}
	if len(removed) == 0 {
		return nil, fmt.Errorf("%s: %w in %s", arg, ErrNotInstalled, dir)
	}
	return removed, nil
}

// removeUnlocked removes a .part unless a download holds its lock.
func removeUnlocked(p string) error {
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		if errors.Is(err, ErrBusy) {
			return fmt.Errorf("%s: %w", p, ErrBusy)
		}
		return err
	}
	return os.Remove(p)
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
