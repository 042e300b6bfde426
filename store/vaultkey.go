package store

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/crypto/argon2"
)

// KeyFileName is the device key in data_dir: 32 random bytes, mode 0600. The
// store file alone (copied off the SD card, in a backup) does not open the
// secrets without it.
const KeyFileName = "secret.key"

const keySize = 32

// DeviceKey reads dataDir's key file, creating it (0600, exclusively) when
// create is set and it does not exist.
func DeviceKey(dataDir string, create bool) ([]byte, error) {
	path := filepath.Join(dataDir, KeyFileName)
	key, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && create {
		return newKeyFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: device key: %w", err)
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("secrets: device key %s holds %d bytes, want %d", path, len(key), keySize)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secrets: device key %s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	return key, nil
}

func newKeyFile(path string) ([]byte, error) {
	key := make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return DeviceKey(filepath.Dir(path), false) // another process made it first
	}
	if err != nil {
		return nil, fmt.Errorf("secrets: device key: %w", err)
	}
	if _, err := f.Write(key); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("secrets: device key: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, fmt.Errorf("secrets: device key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	return key, syncDir(filepath.Dir(path))
}

// Argon2id parameters: 3 passes over 32 MiB, one lane, which takes about a
// second on a Pi 3 and fits a 512 MB board.
const (
	argonTime    = 3
	argonMemory  = 32 * 1024
	argonThreads = 1
	saltKey      = "salt"
)

// PassphraseKey derives the key from a passphrase with Argon2id and the
// store's salt, which is created on first use.
func PassphraseKey(s *Store, passphrase []byte) ([]byte, error) {
	if len(passphrase) == 0 {
		return nil, errors.New("secrets: empty passphrase")
	}
	salt, found, err := s.Get(secretsMetaNS, saltKey)
	if err != nil {
		return nil, err
	}
	if !found {
		if s.ro {
			return nil, errors.New("secrets: the store has no passphrase salt yet: set a secret first")
		}
		salt = make([]byte, 16)
		if _, err := rand.Read(salt); err != nil {
			return nil, err
		}
		if err := s.Put(secretsMetaNS, saltKey, salt); err != nil {
			return nil, err
		}
	}
	return argon2.IDKey(passphrase, salt, argonTime, argonMemory, argonThreads, keySize), nil
}
