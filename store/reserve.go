package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A nearly full disk (a model download, logs) must not stop clawedge: every call,
// reads included, needs its audit intent written first. So the store keeps a
// reserve: a file of DefaultReserve bytes beside clawedge.db that it deletes the
// first time a write finds the disk full, and then retries. An outcome that still
// cannot be written is kept in memory and written when space returns, marked as
// recorded late, instead of being taken for an interrupted call at the next start.

// ReserveSuffix names the reserve file: clawedge.db.reserve.
const ReserveSuffix = ".reserve"

// DefaultReserve is the reserve's size: thousands of audit entries.
const DefaultReserve = 4 << 20

// LateNote ends the detail of an outcome written after the call finished,
// because the disk was full when it did.
const LateNote = " [ran; outcome recorded late: the disk was full]"

// lateOutcome is an outcome waiting for disk space.
type lateOutcome struct {
	ok     bool
	detail string
	at     time.Time
}

// reserve is the store's disk reserve and the outcomes waiting for space.
type reserve struct {
	path string
	size int64
	warn func(string)

	mu   sync.Mutex
	late map[uint64]lateOutcome
}

// fill makes sure the reserve file exists with its size, written (a sparse file
// would reserve nothing). A disk too full for it is said, not fatal.
func (r *reserve) fill() {
	if r.size <= 0 {
		return
	}
	if fi, err := os.Stat(r.path); err == nil && fi.Size() >= r.size {
		return
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = io.CopyN(f, zeros{}, r.size)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		os.Remove(r.path)
		r.say(fmt.Sprintf("disk nearly full: the store cannot keep its %s reserve (%v); once the disk fills, calls will be refused because their audit intent cannot be written",
			kib(r.size), err))
	}
}

// release deletes the reserve file; false when there was none to delete.
func (r *reserve) release(cause error) bool {
	if r.size <= 0 || os.Remove(r.path) != nil {
		return false
	}
	r.say(fmt.Sprintf("DISK FULL (%v): released the store's %s reserve so that the audit trail goes on; free space in %s (it is taken again at the next start)",
		cause, kib(r.size), filepath.Dir(r.path)))
	return true
}

func (r *reserve) say(msg string) {
	if r.warn != nil {
		r.warn(msg)
	}
}

func kib(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// isNoSpace reports a full disk (or quota).
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// write is db.Update with the reserve: a write that finds the disk full releases
// the reserve and is tried again once.
func (s *Store) write(fn func(tx *bolt.Tx) error) error {
	err := s.commit(fn)
	if isNoSpace(err) && s.res.release(err) {
		err = s.commit(fn)
	}
	return err
}

// keepLate holds an outcome the full disk refused, to write it later.
func (s *Store) keepLate(id uint64, ok bool, detail string, cause error) {
	s.res.mu.Lock()
	s.res.late[id] = lateOutcome{ok: ok, detail: detail, at: s.now()}
	s.res.mu.Unlock()
	s.res.say(fmt.Sprintf("DISK FULL (%v): the outcome of audit entry #%d is kept in memory and written, marked as recorded late, when there is space again", cause, id))
}

// FlushLate writes the outcomes kept while the disk was full; it runs before
// every write, at Close, and from the daemon's periodic check.
func (s *Store) FlushLate() error {
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	for id, o := range s.res.late {
		err := s.commit(func(tx *bolt.Tx) error {
			return s.finish(tx, id, o.ok, CapString(o.detail+LateNote, MaxDetail), false, o.at)
		})
		if errors.Is(err, ErrOutcomeRecorded) || errors.Is(err, ErrNoIntent) || err == nil {
			delete(s.res.late, id)
			continue
		}
		return fmt.Errorf("store: write late outcome of #%d: %w", id, err)
	}
	return nil
}

// Late is how many outcomes wait for disk space.
func (s *Store) Late() int {
	s.res.mu.Lock()
	defer s.res.mu.Unlock()
	return len(s.res.late)
}
