package store

// This file: retention. The audit trail and the model steps grow with every
// call; on an SD card partition of a few tens of MiB that stops the board
// within days. The store keeps its live data under a budget, dropping the
// oldest entries first (never an intent still waiting for its outcome), and
// keeps a record of what it dropped (count, id and time range, a digest
// chained over every dropped record) so that the gap is visible. bbolt reuses
// the pages freed, so the file stops growing; Open compacts a file much larger
// than its live data (compact.go), so the space comes back too.

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Retention bounds what the store keeps.
type Retention struct {
	// MaxBytes is the budget of live data; past 85 % of it the oldest entries
	// are dropped until 70 % is left. 0: DefaultBudget of data_dir's filesystem.
	MaxBytes int64
	// MaxAge drops entries older than this; 0: entries stay while they fit.
	MaxAge time.Duration
}

// Budget bounds (DefaultBudget).
const (
	MinBudget = 2 << 20
	MaxBudget = 256 << 20
)

// DefaultBudget is the budget of a store in dataDir when the config names
// none: a quarter of what its filesystem could give it (the free space plus
// the store's own file), from MinBudget to MaxBudget. On the SD image's /perm
// (about 95 MiB) that is some 23 MiB; on a large root filesystem 256 MiB.
func DefaultBudget(dataDir string, fileSize int64) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dataDir, &st); err != nil {
		return MinBudget
	}
	b := (int64(st.Bavail)*int64(st.Bsize) + fileSize) / 4
	return min(max(b, MinBudget), MaxBudget)
}

// Dropped is what retention dropped from one kind of record, so far.
type Dropped struct {
	Count   uint64    `json:"n,omitempty"`
	FirstID uint64    `json:"first,omitempty"`
	LastID  uint64    `json:"last,omitempty"`
	From    time.Time `json:"from,omitzero"` // the oldest dropped record's time
	To      time.Time `json:"to,omitzero"`   // the newest dropped record's time
	// Digest is sha256 chained over every dropped record in order:
	// digest = sha256(previous digest || key || value). Anyone who kept a copy
	// of the entries can check it; a gap nobody recorded cannot pass for none.
	Digest string `json:"digest,omitempty"`
}

// String says it for people: "#1-#5120 (5120 entries, 2026-11-20 to 2026-11-25), sha256 ab12…".
func (d Dropped) String() string {
	if d.Count == 0 {
		return "none"
	}
	digest := d.Digest
	if len(digest) > 16 {
		digest = digest[:16] + "…"
	}
	return fmt.Sprintf("#%d-#%d (%d entries, %s to %s), sha256 %s", d.FirstID, d.LastID, d.Count,
		d.From.Format(time.DateOnly), d.To.Format(time.DateOnly), digest)
}

// DroppedRecords is what retention dropped, per kind.
type DroppedRecords struct {
	Audit Dropped `json:"audit,omitzero"`
	Steps Dropped `json:"steps,omitzero"`
}

var keyDropped = []byte("dropped")

// SetRetention sets the bounds Maintain and Prune keep.
func (s *Store) SetRetention(r Retention) {
	if r.MaxBytes <= 0 {
		r.MaxBytes = DefaultBudget(s.dir(), s.fileSize())
	}
	s.retention.Store(&r)
}

// RetentionOf is the retention in force.
func (s *Store) RetentionOf() Retention {
	if r := s.retention.Load(); r != nil {
		return *r
	}
	return Retention{MaxBytes: DefaultBudget(s.dir(), s.fileSize())}
}

// pruneEvery is how many writes pass between two checks of the budget by the
// writer itself: a cheap check (bbolt's stats), frequent enough that a burst
// of writes cannot run far past the budget before Maintain prunes.
const pruneEvery = 64

// notePressure is called after each write; every pruneEvery writes it checks
// the live size and wakes Maintain when it is past the high-water mark.
func (s *Store) notePressure() {
	if s.writes.Add(1)%pruneEvery != 0 {
		return
	}
	r := s.RetentionOf()
	allow, hist := s.history.allow.Load(), s.history.bytes.Load()
	if allow == 0 { // not measured yet: the whole budget
		allow, hist = r.MaxBytes, 0
	}
	if s.liveBytes()-hist > allow*85/100 {
		select {
		case s.pressure <- struct{}{}:
		default:
		}
	}
}

// liveBytes is what the store's data takes: the file's used size less the
// pages bbolt keeps free for reuse.
func (s *Store) liveBytes() int64 {
	var size int64
	s.db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	return size - int64(s.db.Stats().FreeAlloc)
}

// Maintain keeps the retention until ctx ends: at once, when writes pass the
// high-water mark, and every minute (the age limit). The daemon runs it.
func (s *Store) Maintain(ctx context.Context, warn func(string)) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if _, err := s.Prune(); err != nil && warn != nil && ctx.Err() == nil {
			warn(err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-s.pressure:
		case <-t.C:
		}
	}
}

// pruneBatch is how many records one pruning transaction drops: small enough
// that a call waiting to write its intent is not held up for long.
const pruneBatch = 512

// Prune drops the oldest records until the live data is under 70 % of the
// budget (when it was past 85 %) and none is older than MaxAge. It returns
// how many it dropped.
func (s *Store) Prune() (int, error) {
	if s.ro {
		return 0, nil
	}
	r := s.RetentionOf()
	// The history is not pruned (its rings keep it bounded): the rest is
	// kept within the budget less the history's share (historybudget.go).
	hist := s.measureHistory(r.MaxBytes)
	allow := allowance(r.MaxBytes, hist)
	high, low := allow*85/100, allow*70/100
	bySize := s.liveBytes()-hist.Bytes > high
	total := 0
	for {
		var cutoff time.Time
		if r.MaxAge > 0 {
			cutoff = s.now().Add(-r.MaxAge)
		}
		need := s.liveBytes() - hist.Bytes - low
		if bySize && need <= 0 {
			bySize = false
		}
		if !bySize && !s.olderThan(cutoff) {
			return total, nil // nothing to drop: no commit, no fsync (an idle board writes nothing)
		}
		n := 0
		err := s.update(func(tx *bolt.Tx) error {
			var err error
			n, err = dropOldest(tx, bySize, need, cutoff)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("store: retention: %w", err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

// olderThan reports whether a record to keep no longer is older than cutoff
// (zero: none is), in a read transaction.
func (s *Store) olderThan(cutoff time.Time) bool {
	if cutoff.IsZero() {
		return false
	}
	old := false
	s.db.View(func(tx *bolt.Tx) error {
		for _, b := range []struct{ b, pending *bolt.Bucket }{{tx.Bucket(bucketAudit), tx.Bucket(bucketPending)}, {tx.Bucket(bucketSteps), nil}} {
			if t, ok := oldest(b.b, b.pending); ok && t.Before(cutoff) {
				old = true
			}
		}
		return nil
	})
	return old
}

// dropOldest drops up to pruneBatch of the oldest records: by age (older than
// cutoff, when set) or, with bySize, about need bytes' worth of the file of
// whichever kind's oldest record is older.
func dropOldest(tx *bolt.Tx, bySize bool, need int64, cutoff time.Time) (int, error) {
	var d DroppedRecords
	if raw := tx.Bucket(bucketMeta).Get(keyDropped); raw != nil {
		if err := json.Unmarshal(raw, &d); err != nil {
			return 0, fmt.Errorf("decode the record of dropped entries: %w", err)
		}
	}
	audit, steps := tx.Bucket(bucketAudit), tx.Bucket(bucketSteps)
	pending := tx.Bucket(bucketPending)
	if bySize {
		// need is in bytes of the file; a record takes more there than its
		// own bytes (pages, branches). Counted in records at the mean
		// footprint, a batch drops about what brings the data to the mark.
		records := audit.Sequence() - d.Audit.Count
		if steps != nil {
			records += steps.Sequence() - d.Steps.Count
		}
		if records > 0 {
			need /= max(tx.Size()/int64(records), 1)
		}
	}
	at, aok := oldest(audit, pending)
	st, sok := oldest(steps, nil)
	n := 0
	var err error
	switch {
	case sok && (!cutoff.IsZero() && st.Before(cutoff) || bySize && (!aok || !at.Before(st))):
		n, err = dropFrom(steps, nil, &d.Steps, bySize, need, cutoff)
	case aok && (!cutoff.IsZero() && at.Before(cutoff) || bySize):
		n, err = dropFrom(audit, pending, &d.Audit, bySize, need, cutoff)
	}
	if err != nil || n == 0 {
		return n, err
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return 0, err
	}
	return n, tx.Bucket(bucketMeta).Put(keyDropped, raw)
}

// stamp is the time every audit and step record starts with.
type stamp struct {
	T time.Time `json:"t"`
}

// oldest is the time of b's oldest record that is not pending.
func oldest(b, pending *bolt.Bucket) (time.Time, bool) {
	if b == nil {
		return time.Time{}, false
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if pending != nil && pending.Get(k) != nil {
			continue
		}
		var s stamp
		json.Unmarshal(v, &s)
		return s.T, true
	}
	return time.Time{}, false
}

// dropFrom deletes up to pruneBatch of b's oldest records (skipping pending
// intents): older than cutoff, or with bySize need of them (so that a budget
// of large records is not overshot); and notes them in d.
func dropFrom(b, pending *bolt.Bucket, d *Dropped, bySize bool, need int64, cutoff time.Time) (int, error) {
	var keys [][]byte
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(keys) < pruneBatch; k, v = c.Next() {
		if bySize && int64(len(keys)) > need {
			break
		}
		if pending != nil && pending.Get(k) != nil {
			continue // an intent whose outcome is still to come is never dropped
		}
		var s stamp
		json.Unmarshal(v, &s)
		if !bySize && !s.T.Before(cutoff) {
			break
		}
		prev, _ := hex.DecodeString(d.Digest)
		h := sha256.New()
		h.Write(prev)
		h.Write(k)
		h.Write(v)
		d.Digest = hex.EncodeToString(h.Sum(nil))
		id := binary.BigEndian.Uint64(k)
		if d.Count == 0 {
			d.FirstID, d.From = id, s.T
		}
		d.Count++
		d.LastID, d.To = id, s.T
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(keys), nil
}

// DroppedSoFar is what retention has dropped.
func (s *Store) DroppedSoFar() (DroppedRecords, error) {
	var d DroppedRecords
	err := s.db.View(func(tx *bolt.Tx) error {
		if raw := tx.Bucket(bucketMeta).Get(keyDropped); raw != nil {
			return json.Unmarshal(raw, &d)
		}
		return nil
	})
	return d, err
}

// Usage is how full the store is, for status and doctor.
type Usage struct {
	Live, File, Budget int64
	MaxAge             time.Duration
	Dropped            DroppedRecords
	Oldest             time.Time // the oldest audit entry kept
	// PerHour is the audit entries of the last hour; BytesPerEntry their mean
	// size: with the budget they say how far back the trail will reach.
	PerHour       int
	BytesPerEntry int64
	// History is the sensor history's part: within the budget, its share
	// reserved (historybudget.go).
	History HistoryUsage
}

// Usage reads how full the store is.
func (s *Store) Usage() (Usage, error) {
	r := s.RetentionOf()
	u := Usage{Live: s.liveBytes(), File: s.fileSize(), Budget: r.MaxBytes, MaxAge: r.MaxAge}
	hourAgo := s.now().Add(-time.Hour)
	err := s.db.View(func(tx *bolt.Tx) error {
		if raw := tx.Bucket(bucketMeta).Get(keyDropped); raw != nil {
			json.Unmarshal(raw, &u.Dropped)
		}
		u.History = s.historyUsage(tx)
		u.Oldest, _ = oldest(tx.Bucket(bucketAudit), nil)
		c := tx.Bucket(bucketAudit).Cursor()
		var bytes int64
		for k, v := c.Last(); k != nil; k, v = c.Prev() {
			var st stamp
			json.Unmarshal(v, &st)
			if st.T.Before(hourAgo) {
				break
			}
			u.PerHour++
			bytes += int64(len(k) + len(v))
		}
		if u.PerHour > 0 {
			u.BytesPerEntry = bytes / int64(u.PerHour)
		}
		return nil
	})
	if err != nil {
		return u, fmt.Errorf("store %s: usage: %w", s.path, err)
	}
	return u, nil
}

// Reach says how far back the audit trail will reach at the last hour's rate,
// for people: "about 12 days". Several times a record's size is counted for
// bbolt's pages and the model steps.
func (u Usage) Reach() string {
	if u.PerHour == 0 || u.BytesPerEntry == 0 {
		return "no calls in the last hour"
	}
	hours := float64(allowance(u.Budget, u.History)*70/100) / float64(int64(u.PerHour)*u.BytesPerEntry*2)
	reach := time.Duration(hours * float64(time.Hour))
	if u.MaxAge > 0 && u.MaxAge < reach {
		reach = u.MaxAge
	}
	switch {
	case reach >= 48*time.Hour:
		return fmt.Sprintf("about %d days", int(reach.Hours()/24))
	case reach >= 2*time.Hour:
		return fmt.Sprintf("about %d hours", int(reach.Hours()))
	case reach >= time.Hour:
		return "about an hour"
	}
	return "under an hour"
}
