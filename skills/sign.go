package skills

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/clawedge/clawedge/internal/atomicfile"
	"github.com/clawedge/clawedge/update"
)

// sigFormat names the signature's version; it is part of what is signed.
const sigFormat = "clawedge-skill-signature/1"

// signature is SignatureFile: the signer's public key, every file's path,
// size, mode and sha256, and the ed25519 signature over them (message).
type signature struct {
	Format    string `json:"format"`
	Key       string `json:"key"` // "ed25519:<base64>", as skills.trust lists it
	Files     []File `json:"files"`
	Signature string `json:"signature"` // base64
}

func (f File) MarshalJSON() ([]byte, error) {
	return json.Marshal(fileJSON{f.Path, f.Size, f.Exec, f.SHA256})
}

func (f *File) UnmarshalJSON(b []byte) error {
	var j fileJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = File{Path: j.Path, Size: j.Size, Exec: j.Exec, SHA256: j.SHA256}
	return nil
}

type fileJSON struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Exec   bool   `json:"exec,omitempty"`
	SHA256 string `json:"sha256"`
}

// message is the signed text: the format, then one line per file. Paths
// hold no control characters (checkName), so a line cannot be forged by a
// file name.
func message(files []File) []byte {
	var b strings.Builder
	b.WriteString(sigFormat + "\n")
	for _, f := range files {
		mode := "-"
		if f.Exec {
			mode = "x"
		}
		fmt.Fprintf(&b, "%s %d %s %s\n", f.SHA256, f.Size, mode, f.Path)
	}
	return []byte(b.String())
}

// Sign writes SignatureFile into dir: key's signature over every file of
// the folder, which must be a readable skill (SKILL.md and any tools.yaml
// parse), so that nothing broken is ever signed.
func Sign(dir string, key ed25519.PrivateKey) error {
	t, err := readTree(dir, keepDefs)
	if err != nil {
		return fmt.Errorf("skill %s: %w", dir, err)
	}
	if _, err := parseTree(t, filepath.Base(dir)); err != nil {
		return fmt.Errorf("skill %s: %w", dir, err)
	}
	s := signature{Format: sigFormat, Key: update.FormatKey(key.Public().(ed25519.PublicKey)), Files: t.Files,
		Signature: base64.StdEncoding.EncodeToString(ed25519.Sign(key, message(t.Files)))}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, SignatureFile), append(b, '\n'), 0o644)
}

// Errors of a signature check, each wrapped with what was found.
var (
	ErrUnsigned  = errors.New("the skill is not signed")
	ErrUntrusted = errors.New("the skill is signed by a key skills.trust does not list")
	ErrBadSig    = errors.New("the skill's signature does not verify")
)

// verify checks a signature file's bytes (nil: none) against trust and the tree
// itself, and returns the key that signed it.
func verify(b []byte, t Tree, trust []ed25519.PublicKey) (string, error) {
	if b == nil {
		return "", fmt.Errorf("%w (no %s; sign it with `clawedge skill sign`)", ErrUnsigned, SignatureFile)
	}
	var s signature
	if err := json.Unmarshal(b, &s); err != nil || s.Format != sigFormat {
		return "", fmt.Errorf("%w: %s is not a %s file", ErrBadSig, SignatureFile, sigFormat)
	}
	pub, err := update.ParseKey(s.Key)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadSig, err)
	}
	if !slices.ContainsFunc(trust, func(k ed25519.PublicKey) bool { return k.Equal(pub) }) {
		return "", fmt.Errorf("%w (signed by %s)", ErrUntrusted, s.Key)
	}
	sig, err := base64.StdEncoding.DecodeString(s.Signature)
	if err != nil || !ed25519.Verify(pub, message(s.Files), sig) {
		return "", fmt.Errorf("%w (key %s)", ErrBadSig, s.Key)
	}
	if !slices.IsSortedFunc(s.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) }) {
		return "", fmt.Errorf("%w: its files are not in order", ErrBadSig)
	}
	if err := diff(Tree{Files: s.Files}, t); err != nil {
		return "", fmt.Errorf("%w: %v", ErrTampered, err)
	}
	return s.Key, nil
}

// readSignature reads dir's signature file: nil, nil when there is none.
func readSignature(dir string) ([]byte, error) {
	b, err := readSmall(filepath.Join(dir, SignatureFile), 1<<20)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// readSmall reads a file of at most max bytes, never following a symlink.
func readSmall(p string, max int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > max {
		return nil, fmt.Errorf("%s: not a regular file of at most %d bytes", filepath.Base(p), max)
	}
	b := make([]byte, st.Size())
	_, err = f.ReadAt(b, 0)
	return b, err
}
