package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// fill writes n audit entries (intent and outcome) with a detail of size bytes.
func fill(t testing.TB, s *Store, n, size int) {
	t.Helper()
	detail := strings.Repeat("x", size)
	for i := 0; i < n; i++ {
		id, err := s.Intent("tester", "test", `@gpio/read{pin="led"}`)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Outcome(id, true, detail); err != nil {
			t.Fatal(err)
		}
	}
}

// Retention holds the live data under the budget however much is written, drops
// the oldest entries first, records what it dropped with a digest anyone who kept
// the entries can check, and never drops an intent still waiting for its outcome.
func TestRetentionKeepsTheBudgetOldestFirst(t *testing.T) {
	s := openT(t, t.TempDir())
	const budget = 512 << 10
	s.SetRetention(Retention{MaxBytes: budget})
	pending, err := s.Intent("tester", "test", `@gpio/wait{pin="button";edge="both"}`)
	if err != nil {
		t.Fatal(err)
	}
	raw := map[uint64][]byte{}
	for round := 0; round < 16; round++ {
		fill(t, s, 40, 1000)
		snapshot(t, s, raw)
		if _, err := s.Prune(); err != nil {
			t.Fatal(err)
		}
		if live := s.liveBytes(); live > budget {
			t.Fatalf("round %d: %d bytes live, over the budget of %d", round, live, budget)
		}
	}
	u, err := s.Usage()
	if err != nil {
		t.Fatal(err)
	}
	d := u.Dropped.Audit
	if d.Count == 0 || d.FirstID != pending+1 || d.LastID < d.FirstID {
		t.Fatalf("dropped: %+v", d)
	}
	kept, _ := s.AuditSince(0, 0)
	if kept[0].ID != pending || kept[1].ID != d.LastID+1 {
		t.Errorf("kept from #%d then #%d; dropped up to #%d (the pending intent #%d must stay)", kept[0].ID, kept[1].ID, d.LastID, pending)
	}
	// The digest is sha256 chained over the dropped records, in order.
	var digest []byte
	n := uint64(0)
	for id := d.FirstID; id <= d.LastID; id++ {
		if id == pending {
			continue
		}
		h := sha256.New()
		h.Write(digest)
		h.Write(u64(id))
		h.Write(raw[id])
		digest = h.Sum(nil)
		n++
	}
	if hex.EncodeToString(digest) != d.Digest || n != d.Count {
		t.Errorf("digest %s over %d, want %s over %d", d.Digest, d.Count, hex.EncodeToString(digest), n)
	}
	if !strings.Contains(d.String(), "#2-#") {
		t.Errorf("dropped: %s", d)
	}
}

// snapshot keeps every audit record's stored bytes, by id.
func snapshot(t testing.TB, s *Store, into map[uint64][]byte) {
	t.Helper()
	if err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAudit).ForEach(func(k, v []byte) error {
			into[binary.BigEndian.Uint64(k)] = append([]byte(nil), v...)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
}

// Entries older than MaxAge go, whatever the size.
func TestRetentionMaxAge(t *testing.T) {
	s := openT(t, t.TempDir())
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return now }
	fill(t, s, 10, 10)
	now = now.Add(48 * time.Hour)
	fill(t, s, 5, 10)
	s.SetRetention(Retention{MaxBytes: 64 << 20, MaxAge: 24 * time.Hour})
	if n, err := s.Prune(); err != nil || n != 10 {
		t.Fatalf("pruned %d, %v; want the 10 old entries", n, err)
	}
	if es, _ := s.Tail(100); len(es) != 5 || es[0].ID != 11 {
		t.Fatalf("kept %d entries from #%d", len(es), es[0].ID)
	}
}

// A file much larger than its live data is compacted when it is opened again:
// the space comes back and everything kept is still there.
func TestOpenCompactsABloatedFile(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	fill(t, s, 800, 3000)
	s.SetRetention(Retention{MaxBytes: 256 << 10})
	if _, err := s.Prune(); err != nil {
		t.Fatal(err)
	}
	kept, _ := s.Tail(1000)
	before := s.fileSize()
	s.Close()
	s = openT(t, dir)
	after := s.fileSize()
	if after >= before/2 {
		t.Errorf("file %d bytes before, %d after reopening: not compacted", before, after)
	}
	again, _ := s.Tail(1000)
	if len(again) != len(kept) || again[len(again)-1].ID != kept[len(kept)-1].ID {
		t.Errorf("compaction lost entries: %d kept, %d after", len(kept), len(again))
	}
	if _, err := os.Stat(s.path + CompactSuffix); err == nil {
		t.Error("the compaction's file was left behind")
	}
	// Writing goes on, ids keep growing.
	id, err := s.Intent("tester", "test", "@sys/status{}")
	if err != nil || id <= again[len(again)-1].ID {
		t.Errorf("after compaction: id %d, %v", id, err)
	}
}

// Read-only calls are recorded in group commits, not one commit each, and a
// reader of the trail sees them at once.
func TestReadsAreGroupCommitted(t *testing.T) {
	s := openT(t, t.TempDir())
	commits := 0
	commit := s.commit
	s.commit = func(fn func(tx *bolt.Tx) error) error { commits++; return commit(fn) }
	for i := 0; i < 50; i++ {
		if err := s.Read("tester", "auto", `@gpio/read{pin="led"}`, true, "led = 0 (low)"); err != nil {
			t.Fatal(err)
		}
	}
	if commits != 0 {
		t.Errorf("%d commits for 50 reads before the group commit", commits)
	}
	es, err := s.Tail(100)
	if err != nil || len(es) != 50 || !es[49].Done || !es[49].OK {
		t.Fatalf("%d entries, %v", len(es), err)
	}
	if commits != 1 {
		t.Errorf("%d commits for one group of 50 reads", commits)
	}
}

// An idle board writes nothing: a prune with nothing to drop commits nothing.
func TestPruneWithNothingToDropDoesNotCommit(t *testing.T) {
	s := openT(t, t.TempDir())
	fill(t, s, 5, 10)
	s.SetRetention(Retention{MaxBytes: 64 << 20, MaxAge: time.Hour})
	commits := 0
	commit := s.commit
	s.commit = func(fn func(tx *bolt.Tx) error) error { commits++; return commit(fn) }
	if n, err := s.Prune(); n != 0 || err != nil || commits != 0 {
		t.Errorf("pruned %d (%v) with %d commits; want none", n, err, commits)
	}
}
