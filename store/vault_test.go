package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const canary = "canary-7f3a9c-hunter2-secret-value"

func TestVaultSealsAtRest(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	key, err := DeviceKey(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, KeyFileName)); fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", fi.Mode().Perm())
	}
	v, err := OpenVault(s, key)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 24, 1, 0, 0, 0, time.UTC)
	if err := v.Set("mqtt", canary, t0); err != nil {
		t.Fatal(err)
	}
	v.Set("mqtt", canary+"2", t0.Add(time.Hour))
	v.Set("tg", "other", t0)
	if got, err := v.Get("mqtt"); err != nil || got != canary+"2" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	list, _ := v.List()
	if len(list) != 2 || list[0].Name != "mqtt" || !list[0].Created.Equal(t0) || !list[0].Updated.Equal(t0.Add(time.Hour)) {
		t.Errorf("List = %+v", list)
	}
	if _, err := v.Get("nope"); !errors.Is(err, ErrNoSecret) {
		t.Errorf("Get(nope) = %v", err)
	}
	if ok, _ := v.Remove("tg"); !ok {
		t.Error("Remove(tg) found nothing")
	}
	s.Close()

	raw, _ := os.ReadFile(filepath.Join(dir, FileName))
	if bytes.Contains(raw, []byte("canary-7f3a9c")) || bytes.Contains(raw, []byte("hunter2")) {
		t.Fatal("the store file holds the secret in the clear")
	}

	// The store file alone, with another device key, does not open.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, FileName), raw, 0o600)
	s2, err := Open(other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	key2, _ := DeviceKey(other, true)
	if _, err := OpenVault(s2, key2); !errors.Is(err, ErrWrongKey) {
		t.Fatalf("another key opened the vault: %v", err)
	}
	if v, err := OpenVault(s2, key); err != nil {
		t.Fatal(err)
	} else if got, _ := v.Get("mqtt"); got != canary+"2" {
		t.Fatalf("with the right key: %q", got)
	}
}

func TestVaultPassphrase(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	key, err := PassphraseKey(s, []byte("correct horse"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := OpenVault(s, key)
	if err != nil {
		t.Fatal(err)
	}
	v.Set("api", canary, time.Now())
	bad, _ := PassphraseKey(s, []byte("wrong horse"))
	_, err = OpenVault(s, bad)
	if !errors.Is(err, ErrWrongKey) || !strings.Contains(err.Error(), "wrong passphrase") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	again, _ := PassphraseKey(s, []byte("correct horse"))
	if v, err := OpenVault(s, again); err != nil {
		t.Fatal(err)
	} else if got, _ := v.Get("api"); got != canary {
		t.Fatalf("%q", got)
	}
}

func TestDeviceKeyChecks(t *testing.T) {
	dir := t.TempDir()
	if _, err := DeviceKey(dir, false); err == nil {
		t.Error("a missing key file was accepted")
	}
	DeviceKey(dir, true)
	os.Chmod(filepath.Join(dir, KeyFileName), 0o644)
	if _, err := DeviceKey(dir, false); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable key: %v", err)
	}
	if err := CheckSecretName("a b"); err == nil {
		t.Error("a name with a space")
	}
}
