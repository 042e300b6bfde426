package skills

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// InstallArchive installs the skill in a .tar.gz read from r: one folder
// (or the files of one skill at the archive's top), unpacked with the
// bounds of a folder into a staging folder of skillsDir, then installed
// from there like a folder. Links, devices, absolute names and ".." are
// refused as entries, before anything is written for them.
func InstallArchive(skillsDir string, r io.Reader, opt InstallOptions) (*Skill, error) {
	if err := os.MkdirAll(skillsDir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(skillsDir, ".unpack-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	top, err := unpack(tmp, r)
	if err != nil {
		return nil, fmt.Errorf("refused %s: %w", opt.Source, err)
	}
	src, folder := tmp, ""
	if top != "" {
		src, folder = filepath.Join(tmp, top), top
	}
	return install(skillsDir, src, folder, opt)
}

// unpack writes the archive's folders and regular files into dir and
// returns the one top folder all entries are in, or "" when they are not.
func unpack(dir string, r io.Reader) (string, error) {
	limited := &io.LimitedReader{R: r, N: MaxArchiveBytes + 1}
	gz, err := gzip.NewReader(limited)
	if err != nil {
		return "", fmt.Errorf("not a .tar.gz: %v", err)
	}
	// The unpacked stream is bounded too: a few MiB of gzip can expand to
	// gigabytes of headers and skipped entry data.
	unpacked := &io.LimitedReader{R: gz, N: 2 * MaxArchiveBytes}
	tr := tar.NewReader(unpacked)
	var total int64
	tops := map[string]bool{}
	for n := 0; ; n++ {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && unpacked.N <= 0 {
			return "", fmt.Errorf("the archive unpacks to more than %d bytes", 2*MaxArchiveBytes)
		}
		if err != nil {
			return "", fmt.Errorf("reading the archive: %v", err)
		}
		if n > 2*MaxFiles {
			return "", fmt.Errorf("more than %d entries", 2*MaxFiles)
		}
		name := strings.TrimPrefix(h.Name, "./")
		name = strings.TrimSuffix(name, "/")
		if name == "" || name == "." {
			continue
		}
		if strings.HasPrefix(name, "/") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
			return "", fmt.Errorf("entry %q leaves the folder (an absolute path or \"..\")", h.Name)
		}
		if err := checkName(name); err != nil {
			return "", fmt.Errorf("entry %w", err)
		}
		top, _, _ := strings.Cut(name, "/")
		tops[top] = true
		full := filepath.Join(dir, filepath.FromSlash(name))
		if h.Typeflag != tar.TypeReg && h.Size != 0 {
			return "", fmt.Errorf("entry %s: a non-file entry with %d bytes of data", name, h.Size)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(full, 0o755); err != nil {
				return "", err
			}
			continue
		case tar.TypeReg:
		case tar.TypeSymlink, tar.TypeLink:
			return "", fmt.Errorf("entry %s is a link (to %q): a skill holds only folders and regular files", name, h.Linkname)
		default:
			return "", fmt.Errorf("entry %s is not a folder or a regular file", name)
		}
		if h.Size > MaxFileBytes {
			return "", fmt.Errorf("entry %s: %d bytes, more than %d", name, h.Size, MaxFileBytes)
		}
		if total += h.Size; total > MaxTotalBytes {
			return "", fmt.Errorf("more than %d bytes in all (at %s)", MaxTotalBytes, name)
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return "", err
		}
		mode := os.FileMode(0o644)
		if h.Mode&0o100 != 0 {
			mode = 0o755
		}
		// O_EXCL: a second entry of the same name is refused, never merged.
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, mode)
		if err != nil {
			return "", fmt.Errorf("entry %s: %v", name, err)
		}
		_, err = io.Copy(f, io.LimitReader(tr, h.Size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", fmt.Errorf("entry %s: %v", name, err)
		}
		os.Chmod(full, mode)
	}
	if limited.N <= 0 {
		return "", fmt.Errorf("the archive is larger than %d bytes", MaxArchiveBytes)
	}
	if len(tops) == 1 {
		for t := range tops {
			if fi, err := os.Lstat(filepath.Join(dir, t)); err == nil && fi.IsDir() {
				return t, nil
			}
		}
	}
	return "", nil
}
