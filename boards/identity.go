package boards

// This file: the board's own key and certificate. A board is known to the
// others by the SHA-256 of its certificate, pinned at pairing: no CA, no
// host name to trust, nothing that expires under a board left alone for
// years. The key is made once and kept in the store (data_dir is the
// daemon's own, 0700); it never leaves it.

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// KV is the part of the store the boards keep their state in.
type KV interface {
	Get(bucket, key string) ([]byte, bool, error)
	Put(bucket, key string, value []byte) error
}

const (
	kvBucket   = "boards"
	kvIdentity = "identity"
	kvPeers    = "peers"
)

// Identity is this board's key and certificate.
type Identity struct {
	Cert tls.Certificate
	// Pin is the SHA-256 of the certificate (hex): what other boards pin.
	Pin string
}

type storedIdentity struct {
	Key  []byte `json:"key"`  // ed25519 seed
	Cert []byte `json:"cert"` // DER
}

// LoadIdentity reads this board's identity from kv, making it on first use.
func LoadIdentity(kv KV) (*Identity, error) {
	raw, found, err := kv.Get(kvBucket, kvIdentity)
	if err != nil {
		return nil, err
	}
	var st storedIdentity
	if found {
		if err := json.Unmarshal(raw, &st); err != nil || len(st.Key) != ed25519.SeedSize || len(st.Cert) == 0 {
			return nil, errors.New("boards: the identity in the store does not decode")
		}
	} else {
		seed := make([]byte, ed25519.SeedSize)
		if _, err := rand.Read(seed); err != nil {
			return nil, err
		}
		key := ed25519.NewKeyFromSeed(seed)
		serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
		if err != nil {
			return nil, err
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial,
			Subject:      pkix.Name{CommonName: "clawedge board"},
			NotBefore:    time.Now().Add(-time.Hour),
			// Pinned, never checked for expiry by the boards; far off so
			// that other clients that do check it accept it too.
			NotAfter:    time.Now().AddDate(30, 0, 0),
			KeyUsage:    x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
		if err != nil {
			return nil, err
		}
		st = storedIdentity{Key: seed, Cert: der}
		raw, _ := json.Marshal(st)
		if err := kv.Put(kvBucket, kvIdentity, raw); err != nil {
			return nil, fmt.Errorf("boards: saving the identity: %w", err)
		}
	}
	leaf, err := x509.ParseCertificate(st.Cert)
	if err != nil {
		return nil, fmt.Errorf("boards: the certificate in the store: %w", err)
	}
	return &Identity{
		Cert: tls.Certificate{Certificate: [][]byte{st.Cert}, PrivateKey: ed25519.NewKeyFromSeed(st.Key), Leaf: leaf},
		Pin:  PinOf(st.Cert),
	}, nil
}

// PinOf is the pin of a DER certificate: its SHA-256, hex.
func PinOf(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}
