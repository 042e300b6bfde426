package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

func openT(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{Timeout: time.Second})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// rawUpdate edits the file with bbolt directly, the way a newer or broken build would have.
func rawUpdate(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func TestOpenCreatesDirAndFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "nested")
	s := openT(t, dir)
	if want := filepath.Join(dir, "clawedge.db"); s.Path() != want {
		t.Errorf("Path = %q, want %q", s.Path(), want)
	}
	di, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := di.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("data dir mode %v, want no group/other bits", perm)
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("store file mode %v, want no group/other bits", perm)
	}
	st, err := s.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.SchemaVersion != SchemaVersion || SchemaVersion != 1 {
		t.Errorf("schema version %d, want 1", st.SchemaVersion)
	}
	if st.AuditEntries != 0 || st.FileSize <= 0 || st.Path != s.Path() {
		t.Errorf("stats of a fresh store: %+v", st)
	}
}

func TestOpenEmptyDir(t *testing.T) {
	if _, err := Open("", Options{}); err == nil {
		t.Fatal("Open(\"\") succeeded; it would put the store in the working directory")
	}
}

func TestSchemaVersionStored(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	s.Close()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		got := tx.Bucket([]byte("meta")).Get([]byte("schema_version"))
		if !bytes.Equal(got, []byte{0, 0, 0, 0, 0, 0, 0, 1}) {
			t.Errorf("schema_version = %x, want big-endian 1", got)
		}
		return nil
	})
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	if _, err := s.Intent("stdin", "console", "@sys/echo{}"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	path := filepath.Join(dir, FileName)
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema_version"), u64(99))
	})

	want := fmt.Sprintf("store %s has schema version 99, this clawedge understands up to 1; upgrade clawedge", path)
	for _, ro := range []bool{false, true} {
		_, err := Open(dir, Options{Timeout: time.Second, ReadOnly: ro})
		if err == nil {
			t.Fatalf("ReadOnly=%v: opened a version-99 store", ro)
		}
		if err.Error() != want {
			t.Errorf("ReadOnly=%v: error\n %q\nwant\n %q", ro, err, want)
		}
		if !errors.Is(err, ErrNewerSchema) {
			t.Errorf("ReadOnly=%v: error does not match ErrNewerSchema", ro)
		}
	}

	// The refused open must not have touched the file: still 99, entry still there.
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if v, _, _ := readVersion(tx); v != 99 {
			t.Errorf("version after refused open = %d, want 99", v)
		}
		if tx.Bucket([]byte("audit")).Stats().KeyN != 1 {
			t.Error("audit entry lost by a refused open")
		}
		return nil
	})
}

func TestForeignBoltFileRefused(t *testing.T) {
	dir := t.TempDir()
	rawUpdate(t, filepath.Join(dir, FileName), func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("someone-elses"))
		return err
	})
	_, err := Open(dir, Options{Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "not a clawedge store") {
		t.Fatalf("Open of a foreign bbolt file: %v", err)
	}
}

func TestNotABoltFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), bytes.Repeat([]byte("garbage!"), 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	// A read-write Open keeps such a file aside (TestOpenSetsCorruptStoreAside).
	_, err := Open(dir, Options{Timeout: time.Second, ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileName)) {
		t.Fatalf("Open of garbage: %v (want an error naming the file)", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	id, err := s.Intent("42", "telegram", `@gpio/write{pin="relay";value=1}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Outcome(id, true, "relay=1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("telegram", "offset", []byte("1234")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2 := openT(t, dir)
	got, err := s2.Tail(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != id || got[0].Command != `@gpio/write{pin="relay";value=1}` || !got[0].OK || got[0].Detail != "relay=1" {
		t.Fatalf("after reopen: %+v", got)
	}
	v, ok, err := s2.Get("telegram", "offset")
	if err != nil || !ok || string(v) != "1234" {
		t.Fatalf("Get after reopen = %q, %v, %v", v, ok, err)
	}
	id2, err := s2.Intent("42", "telegram", "@sys/uptime{}")
	if err != nil {
		t.Fatal(err)
	}
	if id2 <= id {
		t.Errorf("id after reopen %d, not after %d", id2, id)
	}
	s2.Close()

	ro, err := Open(dir, Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if st, err := ro.Stats(); err != nil || st.AuditEntries != 2 || st.AuditPending != 1 || st.SchemaVersion != 1 {
		t.Errorf("read-only Stats = %+v, %v", st, err)
	}
	if _, err := ro.Intent("x", "y", "z"); err == nil {
		t.Error("Intent on a read-only store succeeded")
	}
}

func TestReadOnlyMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nothing-here")
	_, err := Open(dir, Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("read-only Open of a missing store: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Error("read-only Open created the data directory")
	}
}

func TestLockedByAnother(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	want := fmt.Sprintf("store %s is in use by another clawedge process (is `clawedge run` running?)", s.Path())
	for _, ro := range []bool{false, true} {
		start := time.Now()
		s2, err := Open(dir, Options{Timeout: 100 * time.Millisecond, ReadOnly: ro})
		if err == nil {
			s2.Close()
			t.Fatalf("ReadOnly=%v: second Open succeeded while the first holds the lock", ro)
		}
		if err.Error() != want {
			t.Errorf("ReadOnly=%v: error\n %q\nwant\n %q", ro, err, want)
		}
		if !errors.Is(err, ErrInUse) {
			t.Errorf("ReadOnly=%v: error does not match ErrInUse", ro)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("ReadOnly=%v: gave up after %v, want about 100ms", ro, d)
		}
	}
	// Released on Close: the next open works.
	s.Close()
	s3, err := Open(dir, Options{Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	s3.Close()
}

func TestSharedReaders(t *testing.T) {
	dir := t.TempDir()
	openT(t, dir).Close()
	a, err := Open(dir, Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(dir, Options{ReadOnly: true, Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	b.Close()
}

func TestMigrations(t *testing.T) {
	// The real table is empty while SchemaVersion is 1, so exercise the mechanism with a
	// table of its own: v1 -> v2 -> v3, applied in order, inside one transaction.
	var order []int
	table := map[int]migration{
		1: func(tx *bolt.Tx) error {
			order = append(order, 1)
			_, err := tx.CreateBucketIfNotExists([]byte("v2"))
			return err
		},
		2: func(tx *bolt.Tx) error {
			order = append(order, 2)
			return tx.Bucket([]byte("v2")).Put([]byte("k"), []byte("v"))
		},
	}
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error { return migrate(tx, 1, 3, table) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[1 2]" {
		t.Errorf("migrations ran in order %v", order)
	}
	db.View(func(tx *bolt.Tx) error {
		if string(tx.Bucket([]byte("v2")).Get([]byte("k"))) != "v" {
			t.Error("migration effects missing")
		}
		return nil
	})

	// A gap in the table and a failing step are errors, and a failure rolls everything back.
	if err := db.Update(func(tx *bolt.Tx) error { return migrate(tx, 1, 4, table) }); err == nil ||
		!strings.Contains(err.Error(), "no migration from schema version 3") {
		t.Errorf("gap: %v", err)
	}
	boom := map[int]migration{
		1: func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("half")); return err },
		2: func(tx *bolt.Tx) error { return errors.New("boom") },
	}
	if err := db.Update(func(tx *bolt.Tx) error { return migrate(tx, 1, 3, boom) }); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failing step: %v", err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("half")) != nil {
			t.Error("a failed migration left half its changes")
		}
		return nil
	})
	if err := db.Update(func(tx *bolt.Tx) error { return migrate(tx, 0, 1, table) }); err == nil {
		t.Error("migrating from version 0 succeeded")
	}
}

func TestOlderSchemaMigrated(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	id, err := s.Intent("stdin", "console", "@sys/uptime{}")
	if err != nil {
		t.Fatal(err)
	}
	path := s.Path()
	s.Close()

	// Version 2 does not exist yet, so run the open-time step with a stand-in target and
	// table, exactly as Open runs the real ones.
	table := map[int]migration{1: func(tx *bolt.Tx) error {
		_, err := tx.CreateBucket([]byte("sessions"))
		return err
	}}
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return (&Store{path: path}).prepare(tx, 2, table)
	})
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if v, _, _ := readVersion(tx); v != 2 {
			t.Errorf("version after migration = %d, want 2", v)
		}
		if tx.Bucket([]byte("sessions")) == nil {
			t.Error("migration step did not run")
		}
		if tx.Bucket([]byte("audit")).Get(u64(id)) == nil {
			t.Error("migration lost the audit entry")
		}
		return nil
	})
	db.Close()

	// This build (SchemaVersion 1) must now refuse the version-2 file.
	if _, err := Open(dir, Options{Timeout: time.Second}); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("Open of a migrated-to-2 file: %v", err)
	}

	// There never was a version 0: refused clearly, not "migrated".
	rawUpdate(t, path, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("meta")).Put([]byte("schema_version"), u64(0))
	})
	if _, err := Open(dir, Options{Timeout: time.Second}); err == nil || !strings.Contains(err.Error(), "invalid schema version 0") {
		t.Errorf("Open of version 0: %v", err)
	}
}

func TestKV(t *testing.T) {
	s := openT(t, t.TempDir())
	if _, ok, err := s.Get("paired", "123"); ok || err != nil {
		t.Fatalf("Get in an unused namespace: %v %v", ok, err)
	}
	if err := s.Put("paired", "123", []byte(`{"name":"ann"}`)); err != nil {
		t.Fatal(err)
	}
	v, ok, err := s.Get("paired", "123")
	if err != nil || !ok || string(v) != `{"name":"ann"}` {
		t.Fatalf("Get = %q %v %v", v, ok, err)
	}
	// Namespaces are separate, and cannot reach the store's own buckets.
	if err := s.Put("meta", "schema_version", []byte("junk")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put("audit", "x", []byte("junk")); err != nil {
		t.Fatal(err)
	}
	if st, err := s.Stats(); err != nil || st.SchemaVersion != 1 || st.AuditEntries != 0 {
		t.Fatalf("a kv Put reached the store's own buckets: %+v %v", st, err)
	}
	if _, ok, _ := s.Get("other", "123"); ok {
		t.Error("namespaces leak into each other")
	}
	// Empty values are values.
	if err := s.Put("settings", "empty", nil); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := s.Get("settings", "empty"); !ok || err != nil || len(v) != 0 {
		t.Errorf("empty value: %q %v %v", v, ok, err)
	}
	// The returned slice is the caller's.
	v[0] = 'X'
	if v2, _, _ := s.Get("paired", "123"); v2[0] != '{' {
		t.Error("Get returned bbolt's memory, not a copy")
	}
	if err := s.Delete("paired", "123"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get("paired", "123"); ok {
		t.Error("Delete left the key")
	}
	if err := s.Delete("never", "used"); err != nil {
		t.Errorf("Delete in an unused namespace: %v", err)
	}
	for _, bk := range [][2]string{{"", "k"}, {"b", ""}} {
		if err := s.Put(bk[0], bk[1], []byte("v")); err == nil {
			t.Errorf("Put(%q, %q) succeeded", bk[0], bk[1])
		}
	}
}

// TestValues: every key and value of a namespace, in key order, copied out
// of the transaction; a namespace never written is empty.
func TestValues(t *testing.T) {
	s, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if keys, values, err := s.Values("goals"); err != nil || len(keys) != 0 || len(values) != 0 {
		t.Fatalf("empty namespace: %v %v %v", keys, values, err)
	}
	for _, k := range []string{"2", "10", "1"} {
		if err := s.Put("goals", k, []byte("v"+k)); err != nil {
			t.Fatal(err)
		}
	}
	s.Put("other", "x", []byte("y"))
	keys, values, err := s.Values("goals")
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(keys, " ", string(bytes.Join(values, []byte(",")))); got != "[1 10 2] v1,v10,v2" {
		t.Errorf("Values = %s", got)
	}
	if _, _, err := s.Values(""); err == nil {
		t.Error("an empty namespace name was accepted")
	}
}
