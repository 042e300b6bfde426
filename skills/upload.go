package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Uploads are archives handed to the board (the dashboard's upload) and
// kept, unverified and not installed, until a call checks or installs one:
// skill/check and skill/install name an upload by its sha256, so what the
// owner was shown is byte for byte what is installed. They lie beside the
// skills as dot files, which loading never reads and Sweep clears after an
// hour; at most MaxUploads are kept, the oldest dropped first, so a browser
// that uploads in a loop holds at most MaxUploads archives of the disk.
type Uploads struct{ Dir string } // the skills folder

// MaxUploads is how many uploads are kept at once.
const MaxUploads = 2

const uploadPrefix = ".upload-"

// ErrNoUpload is an upload id that names nothing kept.
var ErrNoUpload = errors.New("no such upload: it was never made, was installed already, or is older than an hour (upload the archive again)")

// Stage keeps the archive read from r (at most MaxArchiveBytes) and returns
// its id, the hex sha256 of its bytes.
func (u Uploads) Stage(r io.Reader) (string, error) {
	if err := os.MkdirAll(u.Dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(u.Dir, uploadPrefix+"tmp-")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after the rename it names nothing
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(r, MaxArchiveBytes+1))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil:
		return "", fmt.Errorf("receiving the archive: %w", err)
	case n > MaxArchiveBytes:
		return "", fmt.Errorf("the archive is larger than %d bytes", MaxArchiveBytes)
	case n == 0:
		return "", errors.New("the archive is empty")
	}
	id := hex.EncodeToString(h.Sum(nil))
	if err := os.Rename(tmp, u.path(id)); err != nil {
		return "", err
	}
	u.trim(id)
	Sweep(u.Dir, time.Now()) // uploads nobody checked or installed within the hour
	return id, nil
}

// trim drops the oldest uploads beyond MaxUploads, never keep.
func (u Uploads) trim(keep string) {
	m, _ := filepath.Glob(filepath.Join(u.Dir, uploadPrefix+"*.tar.gz"))
	type aged struct {
		p string
		t int64
	}
	var l []aged
	for _, p := range m {
		if fi, err := os.Stat(p); err == nil && p != u.path(keep) {
			l = append(l, aged{p, fi.ModTime().UnixNano()})
		}
	}
	sort.Slice(l, func(i, j int) bool { return l[i].t > l[j].t })
	for i, a := range l {
		if i >= MaxUploads-1 {
			os.Remove(a.p)
		}
	}
}

// Open opens the upload id.
func (u Uploads) Open(id string) (*os.File, error) {
	if err := checkUploadID(id); err != nil {
		return nil, err
	}
	f, err := os.Open(u.path(id))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoUpload
	}
	return f, err
}

// Discard forgets the upload id (nothing when there is none).
func (u Uploads) Discard(id string) {
	if checkUploadID(id) == nil {
		os.Remove(u.path(id))
	}
}

func (u Uploads) path(id string) string { return filepath.Join(u.Dir, uploadPrefix+id+".tar.gz") }

func checkUploadID(id string) error {
	if len(id) != 2*sha256.Size || strings.Trim(id, "0123456789abcdef") != "" {
		return fmt.Errorf("upload %q: want the 64 hex digits of an upload's sha256", id)
	}
	return nil
}
