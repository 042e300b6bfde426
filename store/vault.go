package store

import (
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/chacha20poly1305"
)

// The secrets live in two kv namespaces: "secrets" maps a name to its sealed
// record, "secrets-meta" holds the passphrase salt and a check value that
// tells a wrong key from a damaged record. Names and dates are in the clear
// (secret list shows them); values only sealed, with XChaCha20-Poly1305 and
// the name as additional data, so a record moved to another name does not open.
const (
	secretsNS     = "secrets"
	secretsMetaNS = "secrets-meta"
	checkKey      = "check"
	checkText     = "clawedge secrets v1"
)

// ErrWrongKey means the vault's check value does not open with the key given.
var ErrWrongKey = errors.New("the secrets were sealed with another key: wrong passphrase, or the device key file was replaced")

// ErrNoSecret is wrapped by Get of a name that is not set.
var ErrNoSecret = errors.New("no such secret")

// The length is checked apart: `{1,64}` would compile to a regexp state per
// repetition, 26 kB of heap for the daemon's life.
var secretNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// CheckSecretName says what is wrong with a secret's name.
func CheckSecretName(name string) error {
	if len(name) > 64 || !secretNameRE.MatchString(name) {
		return fmt.Errorf("secret name %q: want 1 to 64 letters, digits, _, . or -", name)
	}
	return nil
}

// SecretInfo is what secret list shows: never the value.
type SecretInfo struct {
	Name             string
	Created, Updated time.Time
}

type sealedRecord struct {
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Box     []byte    `json:"box"` // nonce || ciphertext
}

// Vault seals and opens the secrets of a store with one key.
type Vault struct {
	s    *Store
	aead cipher.AEAD
}

// OpenVault checks key against the store's check value, writing one on first
// use (a read-only store without one accepts any key: it holds no secret).
func OpenVault(s *Store, key []byte) (*Vault, error) {
	aead, err := chacha20poly1305.NewX(key)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	v := &Vault{s: s, aead: aead}
	box, found, err := s.Get(secretsMetaNS, checkKey)
	if err != nil {
		return nil, err
	}
	if found {
		if got, err := v.open(checkKey, box); err != nil || string(got) != checkText {
			return nil, ErrWrongKey
		}
		return v, nil
	}
	if s.ro {
		return v, nil
	}
	return v, s.Put(secretsMetaNS, checkKey, v.seal(checkKey, []byte(checkText)))
}

func (v *Vault) seal(name string, plain []byte) []byte {
	nonce := make([]byte, chacha20poly1305.NonceSizeX, chacha20poly1305.NonceSizeX+len(plain)+v.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return v.aead.Seal(nonce, nonce, plain, []byte(name))
}

func (v *Vault) open(name string, box []byte) ([]byte, error) {
	if len(box) < chacha20poly1305.NonceSizeX {
		return nil, errors.New("sealed value too short")
	}
	return v.aead.Open(nil, box[:chacha20poly1305.NonceSizeX], box[chacha20poly1305.NonceSizeX:], []byte(name))
}

// Set seals value under name, keeping the creation date of an older value.
func (v *Vault) Set(name, value string, now time.Time) error {
	if err := CheckSecretName(name); err != nil {
		return err
	}
	rec := sealedRecord{Created: now.UTC(), Updated: now.UTC(), Box: v.seal(name, []byte(value))}
	if old, found, err := v.record(name); err != nil {
		return err
	} else if found {
		rec.Created = old.Created
	}
	data, _ := json.Marshal(rec)
	return v.s.Put(secretsNS, name, data)
}

func (v *Vault) record(name string) (sealedRecord, bool, error) {
	var rec sealedRecord
	data, found, err := v.s.Get(secretsNS, name)
	if err != nil || !found {
		return rec, found, err
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, true, fmt.Errorf("secret %s: damaged record", name)
	}
	return rec, true, nil
}

// Get opens the secret name. The error never holds a value.
func (v *Vault) Get(name string) (string, error) {
	rec, found, err := v.record(name)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("secret %s: %w (set it with: clawedge secret set %s)", name, ErrNoSecret, name)
	}
	plain, err := v.open(name, rec.Box)
	if err != nil {
		return "", fmt.Errorf("secret %s does not open: damaged, or moved from another name", name)
	}
	return string(plain), nil
}

// List returns every secret's name and dates, by name.
func (v *Vault) List() ([]SecretInfo, error) {
	var out []SecretInfo
	err := v.s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV).Bucket([]byte(secretsNS))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, data []byte) error {
			var rec sealedRecord
			json.Unmarshal(data, &rec)
			out = append(out, SecretInfo{Name: string(k), Created: rec.Created, Updated: rec.Updated})
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, err
}

// Remove deletes name and reports whether it existed.
func (v *Vault) Remove(name string) (bool, error) {
	_, found, err := v.record(name)
	if err != nil || !found {
		return false, err
	}
	return true, v.s.Delete(secretsNS, name)
}
