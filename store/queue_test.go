package store

import (
	"errors"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestQueueEnqueueOffsetAndDedupe(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	if off, found, err := s.QueueOffset("tg"); err != nil || found || off != 0 {
		t.Fatalf("fresh offset = %d, %v, %v", off, found, err)
	}
	if items, err := s.QueueItems("tg", 0); err != nil || len(items) != 0 {
		t.Fatalf("fresh items = %v, %v", items, err)
	}
	added, err := s.Enqueue("tg", 12, []NewQueueItem{{ID: 10, Data: []byte(`{"a":1}`)}, {ID: 11, Data: []byte("not json \xff")}})
	if err != nil || !slices.Equal(added, []uint64{10, 11}) {
		t.Fatalf("Enqueue = %v, %v", added, err)
	}
	// A redelivery of 11 plus a new 12: only 12 is added; the offset moves anyway.
	added, err = s.Enqueue("tg", 13, []NewQueueItem{{ID: 11, Data: []byte(`{}`)}, {ID: 12, Data: []byte(`{"b":2}`)}})
	if err != nil || !slices.Equal(added, []uint64{12}) {
		t.Fatalf("second Enqueue = %v, %v", added, err)
	}
	// An empty batch only moves the offset.
	if added, err := s.Enqueue("tg", 20, nil); err != nil || len(added) != 0 {
		t.Fatalf("empty Enqueue = %v, %v", added, err)
	}
	if off, found, _ := s.QueueOffset("tg"); !found || off != 20 {
		t.Fatalf("offset = %d, %v, want 20", off, found)
	}
	items, err := s.QueueItems("tg", 0)
	if err != nil || len(items) != 3 {
		t.Fatalf("items = %v, %v", items, err)
	}
	if string(items[0].Data) != `{"a":1}` || string(items[1].Data) != "not json \xff" || items[2].ID != 12 || items[0].State != Queued {
		t.Errorf("items = %+v", items)
	}
	if got, _ := s.QueueItems("tg", 2); len(got) != 2 {
		t.Errorf("QueueItems(max 2) = %d items", len(got))
	}

	// Done removes; the id stays known, so a redelivery after done is still dropped.
	if err := s.QueueDone("tg", 10); err != nil {
		t.Fatal(err)
	}
	if err := s.QueueDone("tg", 10); err != nil {
		t.Fatalf("second Done: %v", err)
	}
	if added, _ := s.Enqueue("tg", 21, []NewQueueItem{{ID: 10, Data: []byte(`{}`)}}); len(added) != 0 {
		t.Errorf("redelivery after done was queued again: %v", added)
	}
	if _, err := s.QueueItem("tg", 10); !errors.Is(err, ErrNoQueueItem) {
		t.Errorf("QueueItem(done) err = %v", err)
	}
	// Another queue is separate.
	if added, _ := s.Enqueue("other", 1, []NewQueueItem{{ID: 10, Data: []byte(`{}`)}}); len(added) != 1 {
		t.Errorf("queues are not separate: %v", added)
	}

	// Everything survives a reopen.
	s.Close()
	s = openT(t, dir)
	if off, _, _ := s.QueueOffset("tg"); off != 21 {
		t.Errorf("offset after reopen = %d", off)
	}
	if items, _ := s.QueueItems("tg", 0); len(items) != 2 {
		t.Errorf("items after reopen = %+v", items)
	}
}

func TestQueueIntentMarksStartedAtomically(t *testing.T) {
	s := openT(t, t.TempDir())
	if _, err := s.Enqueue("tg", 2, []NewQueueItem{{ID: 1, Data: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	a, err := s.QueueIntent("tg", 1, "telegram:42", "telegram", `@gpio/toggle{pin="led"}`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.QueueIntent("tg", 1, "telegram:42", "telegram", `@gpio/read{pin="led"}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Outcome(a, true, "led = 1"); err != nil {
		t.Fatal(err)
	}
	it, err := s.QueueItem("tg", 1)
	if err != nil || it.State != Started || !slices.Equal(it.Audit, []uint64{a, b}) || it.Started.IsZero() {
		t.Fatalf("item = %+v, %v", it, err)
	}
	// A crash now: b is pending; Interrupted closes it; the item still lists both.
	if n, err := s.Interrupted(); err != nil || n != 1 {
		t.Fatalf("Interrupted = %d, %v", n, err)
	}
	entries, err := s.AuditEntries(append(it.Audit, 999))
	if err != nil || len(entries) != 2 || !entries[0].OK || !entries[1].Interrupted || entries[0].Who != "telegram:42" {
		t.Fatalf("entries = %+v, %v", entries, err)
	}
	// An intent for an item that is not queued is refused, and records nothing.
	st, _ := s.Stats()
	if _, err := s.QueueIntent("tg", 7, "x", "y", "z"); !errors.Is(err, ErrNoQueueItem) {
		t.Errorf("intent for a missing item: %v", err)
	}
	if st2, _ := s.Stats(); st2.AuditEntries != st.AuditEntries {
		t.Errorf("a refused intent was recorded")
	}
	if err := s.QueueStart("tg", 7); !errors.Is(err, ErrNoQueueItem) {
		t.Errorf("start of a missing item: %v", err)
	}
	// QueueStart marks without an intent.
	s.Enqueue("tg", 3, []NewQueueItem{{ID: 2, Data: []byte(`{}`)}})
	if err := s.QueueStart("tg", 2); err != nil {
		t.Fatal(err)
	}
	if it, _ := s.QueueItem("tg", 2); it.State != Started || len(it.Audit) != 0 {
		t.Errorf("started item = %+v", it)
	}
}

func TestQueueSeenIsBounded(t *testing.T) {
	defer func(old int) { seenLimit = old }(seenLimit)
	seenLimit = 50
	s := openT(t, t.TempDir())
	var batch []NewQueueItem
	for i := range seenLimit + 20 {
		batch = append(batch, NewQueueItem{ID: uint64(i + 1), Data: []byte(`{}`)})
	}
	// Item 1 stays queued; the rest are done.
	if _, err := s.Enqueue("tg", 1, batch[:1]); err != nil {
		t.Fatal(err)
	}
	for _, it := range batch[1:] {
		if _, err := s.Enqueue("tg", it.ID+1, []NewQueueItem{it}); err != nil {
			t.Fatal(err)
		}
		if err := s.QueueDone("tg", it.ID); err != nil {
			t.Fatal(err)
		}
	}
	var seen, order int
	s.db.View(func(tx *bolt.Tx) error {
		q := tx.Bucket(bucketQueues).Bucket([]byte("tg"))
		seen, order = q.Bucket(qSeen).Stats().KeyN, q.Bucket(qSeenOrder).Stats().KeyN
		return nil
	})
	if seen != seenLimit || order != seenLimit {
		t.Errorf("seen = %d, order = %d, want %d", seen, order, seenLimit)
	}
	// The queued item was the oldest but is kept, so its redelivery is still dropped.
	if added, _ := s.Enqueue("tg", 1, batch[:1]); len(added) != 0 {
		t.Errorf("queued item 1 was forgotten")
	}
	// The newest done ids are remembered, the oldest done ones forgotten.
	if added, _ := s.Enqueue("tg", 1, batch[len(batch)-1:]); len(added) != 0 {
		t.Errorf("newest id forgotten")
	}
	if added, _ := s.Enqueue("tg", 1, batch[1:2]); len(added) != 1 {
		t.Errorf("oldest done id still remembered: %v", added)
	}
}

func TestQueueLimitsAndNames(t *testing.T) {
	s := openT(t, t.TempDir())
	if _, err := s.Enqueue("", 1, nil); err == nil {
		t.Error("empty queue name accepted")
	}
	big := make([]byte, MaxQueueData+1)
	if _, err := s.Enqueue("tg", 1, []NewQueueItem{{ID: 1, Data: big}}); !errors.Is(err, ErrItemTooLarge) {
		t.Errorf("oversized item: %v", err)
	}
	if off, found, _ := s.QueueOffset("tg"); found {
		t.Errorf("a refused batch moved the offset to %d", off)
	}
}

// A read-only store (doctor, audit) can read queues, including ones never created.
func TestQueueReadOnly(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	s.Enqueue("tg", 5, []NewQueueItem{{ID: 4, Data: []byte(`{}`)}})
	s.Close()
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if off, _, err := ro.QueueOffset("tg"); err != nil || off != 5 {
		t.Errorf("offset = %d, %v", off, err)
	}
	if items, err := ro.QueueItems("none", 0); err != nil || items != nil {
		t.Errorf("missing queue = %v, %v", items, err)
	}
	if _, err := ro.QueueItem("none", 1); !errors.Is(err, ErrNoQueueItem) {
		t.Errorf("missing queue item: %v", err)
	}
}
