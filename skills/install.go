package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/sandbox"
)

// Plan is what an install would put on the board, shown to the owner
// before anything is written.
type Plan struct {
	Skill    *Skill
	SignedBy string // "" when unsigned
	Source   string
	// Notes are what the owner should know of the tools' paths on this
	// board, such as links out of a declared folder (linksOut).
	Notes []string
}

// Decision is the owner's answer to a Plan.
type Decision struct {
	Install bool
	Grant   bool // allow the skill's tools without a policy rule naming them
}

// InstallOptions are the facts of one install.
type InstallOptions struct {
	Trust  Trust
	Source string // what to record as the source ("" : the folder)
	// Confirm shows the plan to the owner and returns the decision; it is
	// required: nothing is installed that nobody saw.
	Confirm func(Plan) (Decision, error)
	Now     func() time.Time
	// Protected are paths no tool may read or write (CheckProtected).
	Protected []string
}

// ErrDeclined is returned when the owner did not confirm.
var ErrDeclined = errors.New("not installed: the owner declined")

// Install copies the skill folder src into skillsDir/NAME: it reads src once
// (bounded, no symlinks), verifies what it read, shows the plan, writes
// exactly those bytes into a staging folder beside the destination, reads
// the copy back and compares it, records the install, and renames the
// staging folder into place. Any failure removes the staging folder: a skill
// is installed whole or not at all. An installed skill of the same name is
// never replaced (remove it first).
func Install(skillsDir, src string, opt InstallOptions) (*Skill, error) {
	return install(skillsDir, src, filepath.Base(filepath.Clean(src)), opt)
}

func install(skillsDir, src, folder string, opt InstallOptions) (*Skill, error) {
	if opt.Confirm == nil {
		return nil, errors.New("install: no one to confirm it")
	}
	if opt.Source == "" {
		opt.Source = src
	}
	tree, err := readTree(src, func(string) bool { return true })
	if err != nil {
		return nil, fmt.Errorf("refused %s: %w", src, err)
	}
	s, err := parseTree(tree, folder)
	if err != nil {
		return nil, fmt.Errorf("refused %s: %w", src, err)
	}
	sig, err := readSignature(src)
	if err != nil {
		return nil, fmt.Errorf("refused %s: %w", src, err)
	}
	signedBy, err := opt.Trust.check(sig, tree)
	if err != nil {
		return nil, fmt.Errorf("refused %s: %w", src, err)
	}
	if err := CheckProtected(s, opt.Protected); err != nil {
		return nil, err
	}
	if err := checkStart(s, src, opt.Protected); err != nil {
		return nil, fmt.Errorf("refused %s: %w", src, err)
	}
	s.SignedBy = signedBy
	final := filepath.Join(skillsDir, s.Name())
	if _, err := os.Lstat(final); err == nil {
		return nil, fmt.Errorf("skill %s is already installed in %s: remove it first (clawedge skill rm %s)", s.Name(), final, s.Name())
	}
	var notes []string
	for _, d := range s.Tools {
		notes = append(notes, linksOut(d, src, s.Launches[d.Name])...)
	}
	dec, err := opt.Confirm(Plan{Skill: s, SignedBy: signedBy, Source: opt.Source, Notes: notes})
	if err != nil {
		return nil, err
	}
	if !dec.Install {
		return nil, ErrDeclined
	}
	s.Granted = dec.Grant
	if err := os.MkdirAll(skillsDir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Lstat(final); err == nil { // installed meanwhile
		return nil, fmt.Errorf("skill %s is already installed in %s: remove it first (clawedge skill rm %s)", s.Name(), final, s.Name())
	}
	staging, err := os.MkdirTemp(skillsDir, ".install-"+s.Name()+"-")
	if err != nil {
		return nil, err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(staging)
		}
	}()
	if err := writeTree(staging, tree, sig); err != nil {
		return nil, fmt.Errorf("installing %s: %w", s.Name(), err)
	}
	back, err := readTree(staging, nil)
	if err == nil {
		err = diff(tree, back)
	}
	if err != nil {
		return nil, fmt.Errorf("installing %s: the copy does not read back: %w", s.Name(), err)
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	rec := record{Format: recordFormat, Name: s.Name(), Source: opt.Source, SignedBy: signedBy, Granted: dec.Grant,
		Installed: now().UTC(), Files: back.Files}
	if err := writeRecord(staging, rec); err != nil {
		return nil, err
	}
	if err := os.Rename(staging, final); err != nil {
		return nil, fmt.Errorf("installing %s: %w", s.Name(), err)
	}
	done = true
	syncDir(skillsDir)
	s.Dir = final
	s.dropData()
	return s, nil
}

// checkStart checks on this board, before the owner is asked, that each
// tool's program can start and its declared paths can be granted: its #!
// line names an interpreter this board has (an ELF program needs no line),
// resolved with the loader and libraries the sandbox will grant; and no
// declared path goes through a symlink (the sandbox would refuse every
// call: it grants paths as they are). Nothing it starts with may lie in
// protected, as no declared path may. What each tool starts with is kept
// for the plan.
func checkStart(s *Skill, src string, protected []string) error {
	protected = protectedPaths(protected)
	s.Launches = map[string]Launch{}
	for _, d := range s.Tools {
		f, _ := s.Tree.File(d.Run[0]) // parseTree found it, with its contents
		origin := filepath.Dir(filepath.Join(src, filepath.FromSlash(d.Run[0])))
		if abs, err := filepath.Abs(origin); err == nil {
			origin = abs
		}
		l, err := readLaunch(f.data[:min(len(f.data), maxShebang)], func() (io.ReaderAt, error) { return bytes.NewReader(f.data), nil }, origin, d.Read)
		if err != nil {
			return fmt.Errorf("%s: tool %s: %s cannot start on this board: %w", ToolsFile, d.Name, d.Run[0], err)
		}
		for _, g := range l.Grants {
			for _, q := range protected {
				if sandbox.Within(g, q) {
					return fmt.Errorf("%s: tool %s: %s starts with %s, which lies in %s (clawedge's own data and config): refused", ToolsFile, d.Name, d.Run[0], g, q)
				}
			}
		}
		s.Launches[d.Name] = l
		for _, rw := range []struct {
			key   string
			paths []string
		}{{"read", d.Read}, {"write", d.Write}} {
			for _, p := range rw.paths {
				if real, err := filepath.EvalSymlinks(p); err == nil && real != p {
					return fmt.Errorf("%s: tool %s: %s %s goes through a symlink to %s, and the sandbox grants paths as they are: declare the real path (%s: [%s])", ToolsFile, d.Name, rw.key, p, real, rw.key, real)
				}
			}
		}
	}
	return nil
}

// writeTree writes the files of tree (with their contents) and the
// signature into dir, folders 0755 and files 0644 or 0755: a skill's script
// runs as an unprivileged user, which must be able to read it.
func writeTree(dir string, tree Tree, sig []byte) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	write := func(p string, data []byte, mode os.FileMode) error {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
		if err != nil {
			return err
		}
		_, err = f.Write(data)
		if err == nil {
			err = f.Chmod(mode) // whatever the umask says
		}
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	for _, f := range tree.Files {
		mode := fs.FileMode(0o644)
		if f.Exec {
			mode = 0o755
		}
		if err := write(f.Path, f.data, mode); err != nil {
			return err
		}
	}
	if sig != nil {
		return write(SignatureFile, sig, 0o644)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// Remove deletes the installed skill name from skillsDir: renamed aside
// first, so that a crash never leaves half a skill that would load.
func Remove(skillsDir, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	dir := filepath.Join(skillsDir, name)
	if _, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("skill %s is not installed (no %s)", name, dir)
	}
	aside := filepath.Join(skillsDir, ".remove-"+name+"-"+fmt.Sprint(time.Now().UnixNano()))
	if err := os.Rename(dir, aside); err != nil {
		return err
	}
	syncDir(skillsDir)
	return os.RemoveAll(aside)
}

// Sweep removes what an interrupted install or removal left: the dot
// folders beside the skills, once they are older than an hour (so that an
// install running at the same time keeps its staging folder). Loading
// never reads them either way.
func Sweep(skillsDir string, now time.Time) {
	entries, _ := os.ReadDir(skillsDir)
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, ".install-") && !strings.HasPrefix(n, ".remove-") && !strings.HasPrefix(n, ".unpack-") && !strings.HasPrefix(n, uploadPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && now.Sub(fi.ModTime()) > time.Hour {
			os.RemoveAll(filepath.Join(skillsDir, n))
		}
	}
}
