package skills

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Trust is what decides whether a skill may load or install: the keys of
// skills.trust, and whether unsigned skills are accepted at all.
type Trust struct {
	Keys          []ed25519.PublicKey
	AllowUnsigned bool
}

// check verifies a tree's signature, or accepts it unsigned when t allows.
func (t Trust) check(sig []byte, tree Tree) (signedBy string, err error) {
	signedBy, err = verify(sig, tree, t.Keys)
	if (errors.Is(err, ErrUnsigned) || errors.Is(err, ErrUntrusted)) && t.AllowUnsigned {
		// A key nobody here trusts vouches for nothing: such a skill is
		// unsigned, and the owner decides. A signature that does not
		// verify, or files that differ from it, are refused whatever.
		return "", nil
	}
	if errors.Is(err, ErrUnsigned) {
		return "", fmt.Errorf("%w; unsigned skills install only with skills.allow_unsigned: true", err)
	}
	return signedBy, err
}

// Load reads the installed skill in dir and checks it as at every start:
// every file is what was installed (the first that is not is named), the
// signature still verifies with a key still trusted, or the skill is
// unsigned and unsigned skills are still allowed.
func Load(dir string, t Trust) (*Skill, error) {
	name := filepath.Base(dir)
	// The folder's absolute, real path: the sandbox grants paths as they
	// are, refusing relative ones and symlinks (data_dir may be "./data").
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	fail := func(err error) (*Skill, error) { return nil, fmt.Errorf("skill %s: %w", name, err) }
	rec, err := readRecord(dir)
	if err != nil {
		return fail(err)
	}
	tree, err := readTree(dir, keepDefs)
	if err != nil {
		return fail(err)
	}
	if err := diff(Tree{Files: rec.Files}, tree); err != nil {
		return fail(fmt.Errorf("%w: %v since it was installed (reinstall it, or remove it with `clawedge skill rm %s`)", ErrTampered, err, name))
	}
	sig, err := readSignature(dir)
	if err != nil {
		return fail(err)
	}
	signedBy, err := t.check(sig, tree)
	if err != nil {
		return fail(err)
	}
	switch {
	case signedBy == "" && rec.SignedBy != "" && sig == nil:
		return fail(fmt.Errorf("%w: it was installed signed by %s and its signature is gone", ErrTampered, rec.SignedBy))
	case signedBy == "" && rec.SignedBy != "":
		return fail(fmt.Errorf("%w: it was installed signed by %s, which skills.trust no longer lists", ErrUntrusted, rec.SignedBy))
	}
	s, err := parseTree(tree, name)
	if err != nil {
		return fail(err)
	}
	s.dropData()
	s.Dir, s.SignedBy, s.Granted = dir, signedBy, rec.Granted
	return s, nil
}

// LoadAll loads every skill under skillsDir (data_dir/skills): a skill that
// fails is reported and left out, the others load. A missing folder is no
// skills at all.
func LoadAll(skillsDir string, t Trust) ([]*Skill, []error) {
	entries, err := os.ReadDir(skillsDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{err}
	}
	var out []*Skill
	var errs []error
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") { // staging folders of an install in progress or interrupted
			continue
		}
		if !e.IsDir() {
			errs = append(errs, fmt.Errorf("skill %s: not a folder", e.Name()))
			continue
		}
		s, err := Load(filepath.Join(skillsDir, e.Name()), t)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, errs
}
