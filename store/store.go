// Package store is clawedge's persistence: one bbolt file, data_dir/clawedge.db, holding the
// audit trail and small key-value namespaces (channel offsets, paired users, settings).
//
// One file, because a board has one SD card and one place to back up; bbolt, because it is
// pure Go (the core is CGO_ENABLED=0), single-file, and its copy-on-write B+tree commits
// atomically with an fsync, which is what "audit before effects" and "nothing is lost" need.
// bbolt takes an exclusive flock on the file, so exactly one process (the daemon) writes;
// others get a clear "in use" error instead of a second writer.
//
// Layout (schema version 1):
//
//	meta            "schema_version" -> big-endian uint64
//	audit           big-endian uint64 id -> JSON record (see audit.go)
//	audit_pending   big-endian uint64 id -> empty: intents that have no outcome yet
//	kv              one nested bucket per namespace, key -> caller's bytes
//	queues          one nested bucket per durable inbox (see queue.go); created on first use
//	history         one nested bucket per sensor series, rings of buckets (history.go); created on first use
//
// The kv namespaces live under their own parent bucket so that a caller's namespace can
// never be named "meta" or "audit" and overwrite the store's own data.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout this build writes and understands. Bump it together with a
// new entry in migrations.
const SchemaVersion = 1

// FileName is the store's file inside data_dir.
const FileName = "clawedge.db"

// DefaultTimeout is used when Options.Timeout is zero. bbolt treats zero as "wait for the
// lock forever", which for a CLI command started while the daemon runs means a silent hang;
// a short wait and a clear error is better.
const DefaultTimeout = time.Second

// Options are the knobs of Open; the zero value is a read-write store with DefaultTimeout.
type Options struct {
	// Timeout is how long to wait for the file lock held by another process.
	// Zero means DefaultTimeout.
	Timeout time.Duration
	// ReadOnly opens with a shared lock (several readers, no writer). It never creates
	// data_dir or the file and never migrates.
	ReadOnly bool
	// Warn is told, loudly, what Open repaired: a data_dir others could write that
	// was chmod'ed, a corrupted store moved aside. Nil: nobody is told.
	Warn func(msg string)
	// Lost is called once, when a write finds that the store file was removed or
	// replaced under this process (CheckFile); nil: only the write fails.
	Lost func(err error)
	// Reserve is the disk space kept for the store in clawedge.db.reserve
	// (reserve.go); 0 means DefaultReserve, negative none.
	Reserve int64
}

var (
	// ErrInUse matches (errors.Is) the error Open returns when another process holds the lock.
	ErrInUse = errors.New("store is in use by another process")
	// ErrNewerSchema matches the error Open returns for a file written by a newer clawedge.
	ErrNewerSchema = errors.New("store has a newer schema version")
	// ErrNotExist matches the error of a read-only Open of a store never created.
	ErrNotExist = fs.ErrNotExist
	// ErrCorrupt matches the error of a read-only Open of a file that is not a
	// readable bbolt store (a read-write Open moves such a file aside).
	ErrCorrupt = errors.New("store is corrupted")
	// ErrFileLost matches the error of a write after the store file was removed or
	// replaced under the process that has it open.
	ErrFileLost = errors.New("store file was removed or replaced")
)

var (
	bucketMeta    = []byte("meta")
	bucketAudit   = []byte("audit")
	bucketPending = []byte("audit_pending")
	bucketKV      = []byte("kv")
	keySchema     = []byte("schema_version")

	// allBuckets are created on every read-write open, so a migration that adds a bucket
	// only has to add it here (creating it is idempotent).
	allBuckets = [][]byte{bucketMeta, bucketAudit, bucketPending, bucketKV}
)

// migration upgrades the layout from version `from` to from+1, inside the open transaction.
type migration func(tx *bolt.Tx) error

// migrations[v] upgrades a version-v file to v+1. Empty while only version 1 exists: the
// mechanism is here so that version 2 is one function and a test, not a redesign. All steps
// and the new version number are committed in one transaction, so a crash mid-migration
// leaves the file at its old version and the migration simply runs again.
var migrations = map[int]migration{}

// Store is an open clawedge.db. It is safe for concurrent use by goroutines of one process
// (bbolt serialises writers and lets readers run alongside).
type Store struct {
	db   *bolt.DB
	path string
	ro   bool
	now  func() time.Time // a field so tests could pin the clock; always UTC
	// file is the store file as opened; a path that no longer names it (unlinked,
	// replaced) means every write would go into a file nobody will ever read.
	file     os.FileInfo
	onLost   func(error)
	lostOnce sync.Once
	lost     atomic.Pointer[error]
	res      reserve
	// commit is db.Update; a field so that a test can have the disk be full.
	commit func(fn func(tx *bolt.Tx) error) error
	// retention (retention.go): the bounds in force, the writes counted
	// towards the next check of the budget, and Maintain's wake-up.
	retention atomic.Pointer[Retention]
	writes    atomic.Uint64
	pressure  chan struct{}
	reads     readBatch    // read-only calls' records waiting for their group commit (readaudit.go)
	history   historyState // the sensor history's share of the budget (historybudget.go)
}

// Open opens (creating if needed) dataDir/clawedge.db, creates the buckets, and checks or
// writes the schema version, running migrations for an older file.
func Open(dataDir string, opts Options) (*Store, error) {
	if dataDir == "" {
		// filepath.Join would quietly put the store in the working directory.
		return nil, errors.New("store: empty data directory")
	}
	path := filepath.Join(dataDir, FileName)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}

	fresh := false
	if opts.ReadOnly {
		// bbolt would fail with a bare ENOENT; say what it means.
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("store %s does not exist (nothing has been recorded yet): %w", path, ErrNotExist)
		}
	} else {
		// 0700: the store will hold paired users and (encrypted) secrets.
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, fmt.Errorf("store: create data directory: %w", err)
		}
		if err := CheckOwned(dataDir, true, opts.Warn); err != nil {
			return nil, err
		}
		fi, err := os.Stat(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			fresh = true
		case err == nil:
			if err := CheckOwned(path, true, opts.Warn); err != nil {
				return nil, err
			}
			if fi.Size() == 0 {
				// bbolt would quietly make an empty file a new store: whatever
				// was recorded is gone, and that must not pass unnoticed.
				if err := setAside(path, "it is empty (0 bytes)", opts.Warn); err != nil {
					return nil, err
				}
				fresh = true
			}
		}
	}

	db, err := openBolt(path, timeout, opts.ReadOnly)
	if err != nil && isCorrupt(err) && !opts.ReadOnly {
		if err := setAside(path, err.Error(), opts.Warn); err != nil {
			return nil, err
		}
		fresh = true
		db, err = openBolt(path, timeout, false)
	}
	if err != nil {
		switch {
		case errors.Is(err, berrors.ErrTimeout):
			return nil, &inUseError{path: path}
		case isCorrupt(err):
			return nil, &corruptStoreError{path: path, why: err.Error()}
		}
		return nil, fmt.Errorf("store %s: %w", path, err)
	}

	if fresh {
		// bbolt fsyncs the file but not the directory entry that names it; after a power
		// cut a new file could vanish along with everything acknowledged into it.
		if err := syncDir(dataDir); err != nil {
			db.Close()
			return nil, fmt.Errorf("store %s: sync directory: %w", path, err)
		}
	}

	s := &Store{db: db, path: path, ro: opts.ReadOnly, now: func() time.Time { return time.Now().UTC() }, onLost: opts.Lost, pressure: make(chan struct{}, 1),
		res: reserve{path: path + ReserveSuffix, size: opts.Reserve, warn: opts.Warn, late: map[uint64]lateOutcome{}}}
	s.commit = db.Update
	growInSteps(db)
	if s.res.size == 0 {
		s.res.size = DefaultReserve
	}
	if opts.ReadOnly {
		s.res.size = 0
	}
	if opts.ReadOnly {
		err = db.View(s.checkSchemaRO)
	} else {
		err = db.Update(func(tx *bolt.Tx) error { return s.prepare(tx, SchemaVersion, migrations) })
	}
	if err != nil {
		db.Close()
		return nil, err
	}
	if !opts.ReadOnly && !fresh {
		// Before anything uses it: a file much larger than its data gets its space back (compact.go).
		if db, err = compact(db, path, timeout, opts.Warn); err != nil {
			return nil, err
		}
		s.db, s.commit = db, db.Update
		growInSteps(db)
	}
	if s.file, err = os.Stat(path); err != nil {
		db.Close()
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	s.res.fill()
	return s, nil
}

// growStep is how much the file grows by when it must. bbolt would otherwise
// grow it to its next memory map size, which doubles (2, 4, 8 MiB...): a
// store kept at 3 MiB by retention would take 4 on disk, and one step past it 8.
const growStep = 512 << 10

func growInSteps(db *bolt.DB) { db.AllocSize = growStep }

// openBolt opens the bbolt file. bbolt panics on some damaged files (a broken
// freelist page); that is a corrupted store too, not a crash.
func openBolt(path string, timeout time.Duration, readOnly bool) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, &corruptError{fmt.Sprint(r)}
		}
	}()
	return bolt.Open(path, 0o600, &bolt.Options{
		Timeout:  timeout,
		ReadOnly: readOnly,
		// NoSync stays false: every commit fdatasyncs, which is the durability the audit
		// trail promises. FreelistSync stays on too, so reopening after a crash does not
		// need to scan the whole file.
	})
}

type corruptError struct{ what string }

func (e *corruptError) Error() string { return e.what }

// isCorrupt tells a damaged file (worth keeping aside) from a file that could not
// be opened (permissions, a lock), which must be left alone.
func isCorrupt(err error) bool {
	var ce *corruptError
	return errors.As(err, &ce) || errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrVersionMismatch) ||
		errors.Is(err, berrors.ErrChecksum) || strings.Contains(err.Error(), "file size too small")
}

// setAside renames a damaged store to clawedge.db.corrupt-TIME, so that a new one
// can start without losing what may still be recovered from the old, and says so.
func setAside(path, why string, warn func(string)) error {
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405Z")
	if err := os.Rename(path, aside); err != nil {
		return fmt.Errorf("store %s is corrupted (%s), and keeping it aside failed: %w", path, why, err)
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("store %s: sync directory: %w", path, err)
	}
	if warn != nil {
		warn(fmt.Sprintf("STORE CORRUPTED: %s: %s; it was moved to %s and a new, empty store is started (the audit trail, sessions and pairings start over)", path, why, aside))
	}
	return nil
}

// CheckFile fails when the store's path no longer names the file this Store has
// open (removed, or replaced by another file): writes would then go into a file
// nobody will read, so every write refuses with the error from then on, and
// Options.Lost is told once. The daemon also calls it periodically.
func (s *Store) CheckFile() error {
	if p := s.lost.Load(); p != nil {
		return *p
	}
	fi, err := os.Stat(s.path)
	if err == nil && os.SameFile(fi, s.file) {
		return nil
	}
	what := "was removed"
	if err == nil {
		what = "was replaced by another file"
	} else if !errors.Is(err, fs.ErrNotExist) {
		what = "cannot be checked (" + err.Error() + ")"
	}
	lost := fmt.Errorf("store %s %s while clawedge had it open: %w; nothing more is written (it would go into a file nobody reads). "+
		"Stop clawedge, find out who changed %s, and start it again", s.path, what, ErrFileLost, filepath.Dir(s.path))
	s.lost.CompareAndSwap(nil, &lost)
	err = *s.lost.Load()
	s.lostOnce.Do(func() {
		if s.onLost != nil {
			s.onLost(err)
		}
	})
	return err
}

// update is db.Update, refused once the store file is lost (CheckFile), after
// the outcomes that waited for disk space, with the reserve (write).
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	if err := s.CheckFile(); err != nil {
		return err
	}
	s.FlushLate() // still full: they wait on, and this write says so itself
	start := time.Now()
	err := s.write(fn)
	commitSeconds.UpdateDuration(start) // metrics.go
	if err == nil {
		s.notePressure() // retention.go
	}
	return err
}

// dir is data_dir, where the store lives.
func (s *Store) dir() string { return filepath.Dir(s.path) }

// fileSize is the store file's size on disk (0 if it cannot be read).
func (s *Store) fileSize() int64 {
	if fi, err := os.Stat(s.path); err == nil {
		return fi.Size()
	}
	return 0
}

// Close writes what waited for disk space if it can, and releases the file and
// its lock.
func (s *Store) Close() error {
	if !s.ro && s.CheckFile() == nil {
		if err := s.flushReads(); err != nil {
			s.res.say(err.Error())
		}
		if err := s.FlushLate(); err != nil {
			s.res.say(fmt.Sprintf("%v; %d outcome(s) are lost and will read as interrupted", err, s.Late()))
		}
	}
	return s.db.Close()
}

// Path is the store file's path (dataDir/clawedge.db).
func (s *Store) Path() string { return s.path }

// prepare runs in the read-write open transaction: it reads the version, refuses a newer
// one, migrates an older one to target, and makes sure every bucket exists. target and
// table are parameters only so that tests can run a migration before version 2 exists.
func (s *Store) prepare(tx *bolt.Tx, target int, table map[int]migration) error {
	v, found, err := readVersion(tx)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	if !found {
		// No meta bucket: either a brand-new file, or a bbolt file that is not ours.
		// Claiming someone else's file would mix our buckets into it.
		if n := countRootBuckets(tx); n > 0 {
			return fmt.Errorf("store %s has no schema version but holds %d buckets; it is not a clawedge store", s.path, n)
		}
		v = target
	}
	if v > target {
		return &newerSchemaError{path: s.path, version: v, known: target}
	}
	if v < target {
		if err := migrate(tx, v, target, table); err != nil {
			return fmt.Errorf("store %s: %w", s.path, err)
		}
	}
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("store %s: create bucket %s: %w", s.path, name, err)
		}
	}
	if !found || v != target {
		return tx.Bucket(bucketMeta).Put(keySchema, u64(uint64(target)))
	}
	return nil
}

// checkSchemaRO is prepare for a read-only open, which cannot create or migrate anything.
func (s *Store) checkSchemaRO(tx *bolt.Tx) error {
	v, found, err := readVersion(tx)
	if err != nil {
		return fmt.Errorf("store %s: %w", s.path, err)
	}
	switch {
	case !found:
		return fmt.Errorf("store %s has no schema version; it is not a clawedge store or was never opened for writing", s.path)
	case v > SchemaVersion:
		return &newerSchemaError{path: s.path, version: v, known: SchemaVersion}
	case v < SchemaVersion:
		return fmt.Errorf("store %s has schema version %d and needs a migration to %d; open it read-write once (e.g. start `clawedge run`)", s.path, v, SchemaVersion)
	}
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("store %s: bucket %s is missing", s.path, name)
		}
	}
	return nil
}

// migrate applies table[from], table[from+1], ... up to `to`, in the caller's transaction.
func migrate(tx *bolt.Tx, from, to int, table map[int]migration) error {
	if from < 1 {
		return fmt.Errorf("invalid schema version %d", from)
	}
	for v := from; v < to; v++ {
		step, ok := table[v]
		if !ok {
			return fmt.Errorf("no migration from schema version %d to %d", v, v+1)
		}
		if err := step(tx); err != nil {
			return fmt.Errorf("migrate schema %d -> %d: %w", v, v+1, err)
		}
	}
	return nil
}

func readVersion(tx *bolt.Tx) (v int, found bool, err error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, false, nil
	}
	raw := meta.Get(keySchema)
	if raw == nil {
		return 0, false, errors.New("meta bucket has no schema_version")
	}
	if len(raw) != 8 {
		return 0, false, fmt.Errorf("schema_version is %d bytes, want 8", len(raw))
	}
	n := binary.BigEndian.Uint64(raw)
	if n > 1<<31 {
		return 0, false, fmt.Errorf("schema_version %d is not plausible", n)
	}
	return int(n), true, nil
}

func countRootBuckets(tx *bolt.Tx) int {
	n := 0
	_ = tx.ForEach(func([]byte, *bolt.Bucket) error { n++; return nil })
	return n
}

// Stats is a summary for `clawedge doctor` and the like.
type Stats struct {
	Path          string
	FileSize      int64 // bytes on disk, including free pages bbolt keeps for reuse
	SchemaVersion int
	AuditEntries  int
	AuditPending  int // intents without an outcome
}

// Stats reads the summary in one consistent read transaction.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Path: s.path}
	err := s.db.View(func(tx *bolt.Tx) error {
		v, _, err := readVersion(tx)
		if err != nil {
			return err
		}
		st.SchemaVersion = v
		st.FileSize = tx.Size()
		// KeyN walks the bucket's pages; fine for a diagnostic, and unlike the bucket's
		// sequence it stays right if old entries are ever pruned.
		st.AuditEntries = tx.Bucket(bucketAudit).Stats().KeyN
		st.AuditPending = tx.Bucket(bucketPending).Stats().KeyN
		return nil
	})
	if err != nil {
		return Stats{}, fmt.Errorf("store %s: stats: %w", s.path, err)
	}
	if fi, err := os.Stat(s.path); err == nil {
		st.FileSize = fi.Size()
	}
	return st, nil
}

// Put stores value under key in the namespace bucket, durably (the commit fsyncs) — an
// offset or a pairing that was acknowledged must survive a power cut.
func (s *Store) Put(bucket, key string, value []byte) error {
	if err := checkKV(bucket, key); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketKV).CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), value)
	})
	if err != nil {
		return fmt.Errorf("store: put %s/%s: %w", bucket, key, err)
	}
	return nil
}

// Get returns a copy of the value (bbolt's slices are only valid inside the transaction)
// and whether the key exists. A namespace never written to is simply empty.
func (s *Store) Get(bucket, key string) ([]byte, bool, error) {
	if err := checkKV(bucket, key); err != nil {
		return nil, false, err
	}
	var out []byte
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV).Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		if v := b.Get([]byte(key)); v != nil {
			out, found = append([]byte{}, v...), true
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: get %s/%s: %w", bucket, key, err)
	}
	return out, found, nil
}

// Delete removes key from the namespace (unpairing a user, forgetting a setting).
// Deleting a missing key is not an error.
func (s *Store) Delete(bucket, key string) error {
	if err := checkKV(bucket, key); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV).Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		return b.Delete([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("store: delete %s/%s: %w", bucket, key, err)
	}
	return nil
}

// Values returns a copy of every key and value of the namespace, in key
// order (the goals kept across restarts). A namespace never written to is
// empty.
func (s *Store) Values(bucket string) (keys []string, values [][]byte, err error) {
	if err := checkKV(bucket, "-"); err != nil {
		return nil, nil, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketKV).Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			keys = append(keys, string(k))
			values = append(values, append([]byte{}, v...))
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: values of %s: %w", bucket, err)
	}
	return keys, values, nil
}

func checkKV(bucket, key string) error {
	switch {
	case bucket == "":
		return errors.New("store: empty bucket name")
	case key == "":
		return errors.New("store: empty key")
	case len(bucket) > bolt.MaxKeySize || len(key) > bolt.MaxKeySize:
		return fmt.Errorf("store: bucket or key longer than %d bytes", bolt.MaxKeySize)
	}
	return nil
}

// u64 encodes big-endian so that bbolt's byte order is numeric order: cursors walk ids
// oldest to newest and Seek finds "the first id after N".
func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

type inUseError struct{ path string }

func (e *inUseError) Error() string {
	return fmt.Sprintf("store %s is in use by another clawedge process (is `clawedge run` running?)", e.path)
}
func (e *inUseError) Is(target error) bool { return target == ErrInUse }

type corruptStoreError struct{ path, why string }

func (e *corruptStoreError) Error() string {
	return fmt.Sprintf("store %s is corrupted (%s); the next command that writes (clawedge run, exec) keeps it aside as %s.corrupt-TIME and starts a new one",
		e.path, e.why, FileName)
}
func (e *corruptStoreError) Is(target error) bool { return target == ErrCorrupt }

type newerSchemaError struct {
	path           string
	version, known int
}

func (e *newerSchemaError) Error() string {
	return fmt.Sprintf("store %s has schema version %d, this clawedge understands up to %d; upgrade clawedge", e.path, e.version, e.known)
}
func (e *newerSchemaError) Is(target error) bool { return target == ErrNewerSchema }
