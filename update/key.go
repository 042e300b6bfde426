// Package update applies signed A/B updates of the root file system and its
// kernel: a bundle is verified in full (signature, then every file's size and
// sha256) before anything is written, then streamed into the inactive slot,
// read back, and armed for one try boot. The tried slot becomes the default
// only once the system reports itself healthy; anything else (a crash loop, a
// hang, a power cut) ends in the old slot, which reports the failed attempt.
//
// The package imports nothing of clawedge's: the board's block devices, its
// boot partition and its reboot call come in through small interfaces.
package update

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyPrefix starts a public key as the config (update.key) and the image
// carry it: "ed25519:" and the 32-byte key in standard base64.
const KeyPrefix = "ed25519:"

// ParseKey reads a public key written by FormatKey.
func ParseKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	rest, ok := strings.CutPrefix(s, KeyPrefix)
	if !ok {
		return nil, fmt.Errorf("update key %q: want %s<base64 of 32 bytes>", abbrev(s), KeyPrefix)
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("update key %q: want %s<base64 of 32 bytes>", abbrev(s), KeyPrefix)
	}
	return ed25519.PublicKey(b), nil
}

// FormatKey writes a public key as "ed25519:<base64>".
func FormatKey(pub ed25519.PublicKey) string {
	return KeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// privPrefix marks a private key file; the seed follows in base64.
const privPrefix = "ed25519-private:"

// Key file names KeyGen writes in its folder.
const (
	PrivateKeyFile = "clawedge-update.key"
	PublicKeyFile  = "clawedge-update.pub"
)

// KeyGen writes a new key pair into dir: the private key (mode 0600, never
// to be committed) and the public key, one line each. It refuses to replace
// an existing private key: bundles signed with it would stop verifying.
func KeyGen(dir string) (priv, pub string, err error) {
	p, s, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	priv, pub = filepath.Join(dir, PrivateKeyFile), filepath.Join(dir, PublicKeyFile)
	f, err := os.OpenFile(priv, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return "", "", fmt.Errorf("%s exists: not replacing a signing key (move it away first)", priv)
		}
		return "", "", err
	}
	_, err = f.WriteString(privPrefix + base64.StdEncoding.EncodeToString(s.Seed()) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(priv)
		return "", "", err
	}
	if err := os.WriteFile(pub, []byte(FormatKey(p)+"\n"), 0o644); err != nil {
		return "", "", err
	}
	return priv, pub, nil
}

// ReadPrivateKey reads a private key file KeyGen wrote. The key never
// appears in an error.
func ReadPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(string(b)), privPrefix)
	seed, err := base64.StdEncoding.DecodeString(rest)
	if !ok || err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("%s: not an update signing key (want the %s file `clawedge update keygen` writes)", path, PrivateKeyFile)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// ReadPublicKey reads a public key file (one "ed25519:<base64>" line).
func ReadPublicKey(path string) (ed25519.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

func abbrev(s string) string {
	if len(s) > 24 {
		return s[:24] + "..."
	}
	return s
}
