package update

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
)

// A bundle (clawedge-<version>.update) is, in order:
//
//	magic        "clawedge-update/1\n" (18 bytes)
//	length       the manifest's length, 4 bytes big-endian
//	manifest     JSON (Manifest)
//	signature    64 bytes: ed25519 over magic, length and manifest
//	files        each file's bytes, in the manifest's order, back to back
//
// and nothing after. Not tar: the signed manifest already names every file
// and gives its size, so the payload needs no headers of its own; tar's
// would be a second, unsigned set of names, sizes and modes (PAX records,
// GNU long names, sparse entries) to parse and reconcile with the manifest.
// Here the only outside input read before the signature checks out is a
// length. `clawedge update --check FILE` lists what a bundle holds.
const Magic = "clawedge-update/1\n"

// FormatVersion is the manifest format this package reads and writes.
const FormatVersion = 1

// Errors the reader returns (wrapped); test with errors.Is.
var (
	ErrNotBundle = errors.New("not a clawedge update bundle")
	ErrSignature = errors.New("signature does not verify with any trusted key")
	ErrNoKeys    = errors.New("no trusted update key")
	ErrChecksum  = errors.New("sha256 mismatch")
	ErrTruncated = errors.New("bundle truncated")
	ErrTrailing  = errors.New("data after the last file")
)

// Reader reads a bundle as a stream: NewReader checks the header and the
// signature; Next hands out each file's bytes, checking its size and sum as
// they are read. Nothing is buffered beyond a small read buffer.
type Reader struct {
	r    *bufio.Reader
	m    Manifest
	next int
	cur  *fileReader
	off  int64 // bytes of the bundle consumed, for messages
}

// NewReader reads the header, the manifest and its signature from r and
// checks the signature against keys before parsing the manifest.
func NewReader(r io.Reader, keys []ed25519.PublicKey) (*Reader, error) {
	if len(keys) == 0 {
		return nil, ErrNoKeys
	}
	br := bufio.NewReaderSize(r, 64<<10)
	head := make([]byte, len(Magic)+4)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, fmt.Errorf("%w: %d-byte header: %v", ErrNotBundle, len(head), shortRead(err))
	}
	if string(head[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("%w: it does not start with %q", ErrNotBundle, Magic[:len(Magic)-1])
	}
	n := binary.BigEndian.Uint32(head[len(Magic):])
	if n == 0 || n > MaxManifest {
		return nil, fmt.Errorf("%w: manifest length %d at byte %d, want 1 to %d", ErrNotBundle, n, len(Magic), MaxManifest)
	}
	signed := make([]byte, len(head)+int(n))
	copy(signed, head)
	if _, err := io.ReadFull(br, signed[len(head):]); err != nil {
		return nil, fmt.Errorf("%w: in the %d-byte manifest: %v", ErrTruncated, n, shortRead(err))
	}
	sig := make([]byte, ed25519.SignatureSize)
	if _, err := io.ReadFull(br, sig); err != nil {
		return nil, fmt.Errorf("%w: in the signature: %v", ErrTruncated, shortRead(err))
	}
	ok := false
	for _, k := range keys {
		if len(k) == ed25519.PublicKeySize && ed25519.Verify(k, signed, sig) {
			ok = true
			break
		}
	}
	if !ok {
		return nil, ErrSignature
	}
	m, err := parseManifest(signed[len(head):])
	if err != nil {
		return nil, err
	}
	return &Reader{r: br, m: m, off: int64(len(signed) + len(sig))}, nil
}

func shortRead(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return errors.New("unexpected end")
	}
	return err
}

// Manifest is the verified manifest.
func (b *Reader) Manifest() Manifest { return b.m }

// Next returns the next file and a reader of its bytes. The reader fails
// with ErrChecksum (or ErrTruncated) on its last read if the bytes are not
// the manifest's: a consumer must not act on a file before reading it to
// io.EOF. Next first drains what the previous file's consumer left unread,
// so every sum is checked. After the last file Next returns io.EOF, once it
// has checked that nothing follows.
func (b *Reader) Next() (File, io.Reader, error) {
	if b.cur != nil {
		if _, err := io.Copy(io.Discard, b.cur); err != nil {
			return File{}, nil, err
		}
		b.cur = nil
	}
	if b.next == len(b.m.Files) {
		if _, err := b.r.ReadByte(); err != io.EOF {
			if err == nil {
				return File{}, nil, fmt.Errorf("%w (at byte %d)", ErrTrailing, b.off)
			}
			return File{}, nil, err
		}
		return File{}, nil, io.EOF
	}
	f := b.m.Files[b.next]
	b.next++
	b.cur = &fileReader{b: b, f: f, left: f.Size, h: sha256.New()}
	return f, b.cur, nil
}

// fileReader reads one file's bytes and checks them at their end.
type fileReader struct {
	b    *Reader
	f    File
	left int64
	h    hash.Hash
	err  error
}

func (r *fileReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.left == 0 {
		if got := hex.EncodeToString(r.h.Sum(nil)); got != r.f.SHA256 {
			r.err = &ChecksumError{File: r.f.Name, Got: got, Want: r.f.SHA256}
		} else {
			r.err = io.EOF
		}
		return 0, r.err
	}
	if int64(len(p)) > r.left {
		p = p[:r.left]
	}
	n, err := r.b.r.Read(p)
	r.h.Write(p[:n])
	r.left -= int64(n)
	r.b.off += int64(n)
	if err == io.EOF && r.left > 0 {
		r.err = fmt.Errorf("%w: %s ends after %d of its %d bytes", ErrTruncated, r.f.Name, r.f.Size-r.left, r.f.Size)
		return n, r.err
	}
	if err != nil && err != io.EOF {
		r.err = err
		return n, err
	}
	return n, nil
}

// ChecksumError is a file whose bytes are not the ones the manifest signed.
type ChecksumError struct{ File, Got, Want string }

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("%s: sha256 %s, the signed manifest says %s", e.File, e.Got, e.Want)
}
func (e *ChecksumError) Unwrap() error { return ErrChecksum }

// Verify reads a whole bundle and checks its signature and every file,
// writing nothing. progress, if set, gets the payload bytes read so far.
func Verify(r io.Reader, keys []ed25519.PublicKey, progress func(done, total int64)) (Manifest, error) {
	b, err := NewReader(r, keys)
	if err != nil {
		return Manifest{}, err
	}
	total := b.m.Total()
	var done int64
	buf := make([]byte, 256<<10)
	for {
		_, fr, err := b.Next()
		if err == io.EOF {
			return b.m, nil
		}
		if err != nil {
			return Manifest{}, err
		}
		for {
			n, err := fr.Read(buf)
			done += int64(n)
			if progress != nil && n > 0 {
				progress(done, total)
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return Manifest{}, err
			}
		}
	}
}

// Write writes a bundle of m's files to w, signed with key. open gives each
// file's bytes, which must be the size and sum m lists (Write checks them:
// a file that changed since the manifest was made fails the build).
func Write(w io.Writer, m Manifest, key ed25519.PrivateKey, open func(File) (io.ReadCloser, error)) error {
	if err := m.Check(); err != nil {
		return err
	}
	js, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var signed bytes.Buffer
	signed.WriteString(Magic)
	binary.Write(&signed, binary.BigEndian, uint32(len(js)))
	signed.Write(js)
	if _, err := w.Write(signed.Bytes()); err != nil {
		return err
	}
	if _, err := w.Write(ed25519.Sign(key, signed.Bytes())); err != nil {
		return err
	}
	for _, f := range m.Files {
		rc, err := open(f)
		if err != nil {
			return err
		}
		h := sha256.New()
		n, err := io.Copy(io.MultiWriter(w, h), io.LimitReader(rc, f.Size+1))
		rc.Close()
		if err != nil {
			return err
		}
		if n != f.Size || hex.EncodeToString(h.Sum(nil)) != f.SHA256 {
			return fmt.Errorf("%s changed while the bundle was written", f.Name)
		}
	}
	return nil
}

// Describe reads a file's size and sha256 for a manifest entry.
func Describe(name, target string, r io.Reader) (File, error) {
	h := sha256.New()
	n, err := io.Copy(h, r)
	if err != nil {
		return File{}, err
	}
	return File{Name: name, Target: target, Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
