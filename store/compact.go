package store

// This file: giving space back. bbolt never shrinks its file: pages freed by
// retention are reused, so the file stops growing, but a file that once grew
// past its live data (before a budget was set, or after a burst) keeps its
// size. Open copies such a file into a new one holding only the live data
// (bbolt's Compact) and renames it over the old: a rename is atomic, so a
// power cut leaves either file whole.

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/clawedge/clawedge/internal/atomicfile"
)

// CompactSuffix names the file a compaction writes before it is renamed over
// the store; one left by a power cut is removed at the next Open.
const CompactSuffix = ".compact"

// bloated reports whether the file is worth compacting: more than twice its
// live data and at least 1 MiB over it.
func bloated(file, live int64) bool { return file > 2*live && file-live >= 1<<20 }

// compact rewrites the store at path, which db has open, into a file of its
// live data, and returns the store opened anew. It does nothing (and returns
// db) when the file is not bloated or the disk lacks room for the copy; warn
// says what was done or why not.
func compact(db *bolt.DB, path string, timeout time.Duration, warn func(string)) (*bolt.DB, error) {
	tmp := path + CompactSuffix
	os.Remove(tmp)
	fi, err := os.Stat(path)
	if err != nil {
		return db, nil
	}
	var size int64
	db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	live := size - int64(db.Stats().FreeAlloc)
	if !bloated(fi.Size(), live) {
		return db, nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil || int64(st.Bavail)*int64(st.Bsize) < live+live/2+(1<<20) {
		if warn != nil {
			warn(fmt.Sprintf("store %s is %d bytes for %d of live data, but the disk has no room to compact it; it stays as it is", path, fi.Size(), live))
		}
		return db, nil
	}
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: timeout})
	if err != nil {
		return db, nil
	}
	if err := bolt.Compact(dst, db, 4<<20); err != nil {
		dst.Close()
		os.Remove(tmp)
		if warn != nil {
			warn(fmt.Sprintf("store %s: compaction failed, the store stays as it is: %v", path, err))
		}
		return db, nil
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return db, nil
	}
	// From here the old file is replaced: its lock is released for the moment
	// between Close and the new Open (Open runs before anything else uses it).
	if err := db.Close(); err != nil {
		return nil, fmt.Errorf("store %s: close for compaction: %w", path, err)
	}
	if err := atomicfile.Replace(tmp, path); err != nil {
		os.Remove(tmp) // gone already when the rename was made
		return openBolt(path, timeout, false)
	}
	return openBolt(path, timeout, false)
}
