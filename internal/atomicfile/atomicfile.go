// Package atomicfile replaces a file so that a crash or a power cut leaves
// the old content or the new, never neither and never half of one: the new
// content goes to a temporary file in the same folder, is flushed to the
// disk, renamed over the old name, and the folder (which holds the name) is
// flushed too. Every writer of a file someone relies on uses it: the config
// and its secrets, MEMORY.md, a skill's signature, the boot partition's
// files, the model runner's saved prompt, the compacted store.
package atomicfile

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile replaces path with data, with permission perm.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, bytes.NewReader(data), perm)
}

// Write replaces path with what r holds, with permission perm.
func Write(path string, r io.Reader, perm os.FileMode) error {
	return WriteFunc(path, perm, func(w io.Writer) error {
		_, err := io.Copy(w, r)
		return err
	})
}

// WriteFunc replaces path with what fill writes, with permission perm. The
// folder must exist. On an error path is as it was, and no temporary file
// is left.
func WriteFunc(path string, perm os.FileMode, fill func(w io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
			err = fmt.Errorf("writing %s: %w", path, err)
		}
	}()
	if err = step(path, "created"); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	if err = fill(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = step(path, "written"); err != nil {
		return err
	}
	if err = keepOwner(f, path); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = replace(tmp, path); err != nil {
		os.Remove(tmp) // gone already when the rename was made
	}
	return err
}

// Replace puts finished, a whole file made in path's folder (a download, a
// compacted database), in place of path: flushed first, then renamed. On an
// error before the rename, finished is left as it is, the caller's.
func Replace(finished, path string) error {
	if err := replace(finished, path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func replace(tmp, path string) error {
	if err := syncPath(tmp); err != nil {
		return err
	}
	if err := step(path, "synced"); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if err := step(path, "renamed"); err != nil {
		return nil // a crash past the rename leaves the new file: done
	}
	// The file is flushed again after the rename: on vfat (the SD image's
	// boot partition) a rename writes the new name's entry with no clusters
	// and size 0, and the real ones only with the file's own metadata, so
	// flushing the folder alone left the file empty after a power cut.
	if err := syncPath(path); err != nil {
		return err
	}
	if err := syncPath(filepath.Dir(path)); err != nil {
		return fmt.Errorf("flushing its folder: %w", err)
	}
	return nil
}

// Copy makes dst a durable copy of src (a backup that is whole the moment
// it exists), with src's permissions.
func Copy(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	return Write(dst, in, fi.Mode().Perm())
}

// keepOwner gives f, as root, the owner of the file it replaces, or of the
// folder when there is none: `sudo clawedge memory add` or `sudo clawedge
// setup` must not leave the daemon's user a file it cannot read.
func keepOwner(f *os.File, path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		if fi, err = os.Stat(filepath.Dir(path)); err != nil {
			return nil
		}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Uid == 0 && st.Gid == 0 {
		return nil // root's, as the file already is
	}
	return f.Chown(int(st.Uid), int(st.Gid))
}

func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
