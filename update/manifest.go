package update

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Targets of a bundle's files.
const (
	TargetRoot = "root" // the slot's root file system image, written to its block device
	TargetBoot = "boot" // a file of the slot's folder on the boot partition (kernel, device trees)
)

// Limits on what a manifest may describe: far above any real slot, low
// enough that a hostile manifest cannot make the reader plan absurd work.
const (
	MaxManifest = 1 << 20
	MaxFiles    = 1024
	MaxFileSize = 1 << 30
)

// Manifest says what a bundle holds. It is signed; the files follow it in
// the bundle, in this order.
type Manifest struct {
	Format  int    `json:"format"`
	Version string `json:"version"`
	// Epoch is the build's source time (the commit's, in Unix seconds): it
	// orders two versions that are bare commit ids.
	Epoch int64  `json:"epoch,omitempty"`
	Board string `json:"board"`
	Files []File `json:"files"`
}

// File is one file of a bundle.
type File struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Total is the size of the bundle's files.
func (m Manifest) Total() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// Root is the root file system's entry.
func (m Manifest) Root() File {
	for _, f := range m.Files {
		if f.Target == TargetRoot {
			return f
		}
	}
	return File{}
}

// The lengths (64, 128, 128) are checked apart: counted repetitions such as
// {0,127} compile to a regexp state per repetition, 300 kB of heap and 12 ms
// at every start of the daemon, which links this package.
var (
	boardRE   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)
	versionRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+~-]*$`)
	partRE    = regexp.MustCompile(`^[A-Za-z0-9_+-][A-Za-z0-9._+-]*$`)
)

// parseManifest decodes and checks a manifest: unknown fields, a second
// root, a path that climbs out of the slot's folder, a bad sum are errors.
func parseManifest(b []byte) (Manifest, error) {
	var m Manifest
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return Manifest{}, fmt.Errorf("manifest: %w", err)
	}
	if d.More() {
		return Manifest{}, errors.New("manifest: data after the JSON object")
	}
	return m, m.Check()
}

// Check says what is wrong with a manifest, naming the file.
func (m Manifest) Check() error {
	if m.Format != FormatVersion {
		return fmt.Errorf("manifest: format %d, this clawedge reads format %d", m.Format, FormatVersion)
	}
	if len(m.Version) > 128 || !versionRE.MatchString(m.Version) {
		return fmt.Errorf("manifest: version %q: want letters, digits and . _ + ~ -", m.Version)
	}
	if len(m.Board) > 64 || !boardRE.MatchString(m.Board) {
		return fmt.Errorf("manifest: board %q: want lower-case letters, digits and . _ -", m.Board)
	}
	if m.Epoch < 0 {
		return fmt.Errorf("manifest: negative epoch %d", m.Epoch)
	}
	if len(m.Files) == 0 || len(m.Files) > MaxFiles {
		return fmt.Errorf("manifest: %d files, want 1 to %d", len(m.Files), MaxFiles)
	}
	roots := 0
	seen := map[string]bool{}
	for i, f := range m.Files {
		where := fmt.Sprintf("manifest: files[%d] %q", i, f.Name)
		switch f.Target {
		case TargetRoot:
			roots++
		case TargetBoot:
		default:
			return fmt.Errorf("%s: target %q, want %s or %s", where, f.Target, TargetRoot, TargetBoot)
		}
		if err := checkName(f.Name); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if key := f.Target + "/" + strings.ToLower(f.Name); seen[key] {
			return fmt.Errorf("%s: listed twice", where) // FAT does not tell case apart
		} else {
			seen[key] = true
		}
		if f.Size < 0 || f.Size > MaxFileSize {
			return fmt.Errorf("%s: size %d, want 0 to %d", where, f.Size, MaxFileSize)
		}
		if b, err := hex.DecodeString(f.SHA256); err != nil || len(b) != 32 || strings.ToLower(f.SHA256) != f.SHA256 {
			return fmt.Errorf("%s: sha256 %q: want 64 lower-case hex digits", where, f.SHA256)
		}
	}
	if roots != 1 {
		return fmt.Errorf("manifest: %d files with target %s, want exactly one", roots, TargetRoot)
	}
	return nil
}

// checkName allows a file or one folder level below the slot's folder
// ("overlays/x.dtbo"): no "..", no absolute path, no hidden file.
func checkName(name string) error {
	parts := strings.Split(name, "/")
	if len(parts) > 2 {
		return errors.New("more than one folder level")
	}
	for _, p := range parts {
		if len(p) > 128 || !partRE.MatchString(p) {
			return errors.New("want letters, digits and . _ + -, not starting with a dot")
		}
	}
	return nil
}

// Version is a release as the updater orders them.
type Version struct {
	Name  string // v0.3.1, v0.3.1-4-gabc1234, abc1234, abc1234-dirty
	Epoch int64  // the source time; 0 when unknown
}

func (v Version) String() string { return v.Name }

// describeRE is `git describe --tags` output: a tag and the commits since.
var describeRE = regexp.MustCompile(`^v?(\d+)\.(\d+)\.(\d+)(?:-(\d+)-g[0-9a-f]+)?(?:-dirty)?$`)

// Compare orders a against b (-1, 0, +1). Tagged versions compare by
// their numbers (and commits since the tag); anything else by epoch. ok is
// false when neither tells: two commit ids with no epoch.
func Compare(a, b Version) (c int, ok bool) {
	na, aok := describeNums(a.Name)
	nb, bok := describeNums(b.Name)
	if aok && bok {
		for i := range na {
			if na[i] != nb[i] {
				if na[i] < nb[i] {
					return -1, true
				}
				return 1, true
			}
		}
		return 0, true
	}
	if a.Epoch > 0 && b.Epoch > 0 {
		switch {
		case a.Epoch < b.Epoch:
			return -1, true
		case a.Epoch > b.Epoch:
			return 1, true
		}
		if a.Name == b.Name {
			return 0, true
		}
		return 0, false
	}
	if a.Name == b.Name {
		return 0, true
	}
	return 0, false
}

func describeNums(s string) ([4]uint64, bool) {
	var n [4]uint64
	m := describeRE.FindStringSubmatch(s)
	if m == nil {
		return n, false
	}
	for i := range n {
		if m[i+1] == "" {
			continue
		}
		v, err := strconv.ParseUint(m[i+1], 10, 64)
		if err != nil {
			return n, false
		}
		n[i] = v
	}
	return n, true
}
