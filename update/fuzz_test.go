package update

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"io"
	"testing"
)

// fuzzKey signs the seed bundles in testdata/fuzz/FuzzBundle, so that the
// fuzzer starts past the signature check and mutates manifests and payloads
// behind a valid header. It is a test key, trusted by nothing else.
var fuzzKey = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize))

// FuzzBundle feeds bundles (outside input: a file or a download) to the
// streaming reader: it must refuse or accept without panicking, and accept
// only what its manifest describes byte for byte.
func FuzzBundle(f *testing.F) {
	f.Add(makeBundle(f, bundleSpec{version: "v1.0.0", board: testBoard, root: []byte("root"), kernel: []byte("k"), key: fuzzKey}))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys := []ed25519.PublicKey{fuzzKey.Public().(ed25519.PublicKey)}
		m, err := Verify(bytes.NewReader(data), keys, nil)
		if err != nil {
			return
		}
		if err := m.Check(); err != nil {
			t.Fatalf("accepted a manifest that fails its checks: %v", err)
		}
		// The accepted bundle is exactly header + files: reading it again
		// file by file gives the manifest's sizes.
		b, err := NewReader(bytes.NewReader(data), keys)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range m.Files {
			fe, r, err := b.Next()
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, r)
			if err != nil || n != want.Size || fe != want {
				t.Fatalf("%s: %d bytes, %v", fe.Name, n, err)
			}
		}
		if _, _, err := b.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the last file: %v", err)
		}
	})
}

// FuzzManifest feeds manifests straight to the parser, which the signature
// hides from FuzzBundle's mutations.
func FuzzManifest(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := parseManifest(data)
		if err != nil {
			return
		}
		for _, fe := range m.Files {
			if fe.Size < 0 || fe.Size > MaxFileSize || checkName(fe.Name) != nil {
				t.Fatalf("accepted %+v", fe)
			}
		}
	})
}
