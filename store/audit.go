package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Caps on what one audit entry may hold. A tool result can be a whole serial read or a
// runaway model output; the audit must stay small on an SD card, so the excess is cut and
// a marker says how much there was.
const (
	MaxCommand = 4 << 10
	MaxDetail  = 4 << 10
	MaxWho     = 256 // who and channel are names (a Telegram user, "console"), never payloads
)

// InterruptedDetail is the outcome Interrupted records for an intent that never got one.
const InterruptedDetail = "interrupted: clawedge stopped before this finished; the effect may or may not have happened"

// AuditEntry is one tool call: the intent, and once known, its outcome.
type AuditEntry struct {
	ID          uint64
	Time        time.Time // when the intent was recorded (UTC)
	Who         string    // the person or agent: a Telegram user id, "stdin", a session
	Channel     string    // where it came from: "console", "telegram"
	Command     string    // the call, in the command language
	Done        bool      // an outcome has been recorded
	DoneTime    time.Time
	OK          bool
	Detail      string
	Interrupted bool // the outcome was written by Interrupted, not by the tool
}

// record is the stored form of an entry; the id is the key, not part of the value.
//
// JSON rather than a compact binary encoding: every write already costs an fsync
// (milliseconds on an SD card) next to which encoding is noise (microseconds); a JSON value
// can be read with `bbolt get` or any hex dump when something goes wrong on a board in the
// field; and adding a field later needs no migration, since old records decode with the
// field zero and old binaries ignore new fields. The price is some bytes per entry, which
// the 4 KiB caps bound anyway. Field names are kept short but readable.
type record struct {
	Time        time.Time `json:"t"`
	Who         string    `json:"who,omitempty"`
	Channel     string    `json:"ch,omitempty"`
	Command     string    `json:"cmd"`
	Done        bool      `json:"done,omitempty"`
	DoneTime    time.Time `json:"done_t,omitzero"`
	OK          bool      `json:"ok,omitempty"`
	Detail      string    `json:"detail,omitempty"`
	Interrupted bool      `json:"intr,omitempty"`
}

// Intent records that a call is about to run and returns its id. It returns only after the
// transaction is committed and fsynced: the caller may then perform the effect, and a crash
// at any later moment leaves this intent on disk for Interrupted to find.
func (s *Store) Intent(who, channel, command string) (uint64, error) {
	val, err := s.intentRecord(who, channel, command)
	if err != nil {
		return 0, err
	}
	var id uint64
	err = s.update(func(tx *bolt.Tx) (err error) {
		id, err = putIntent(tx, val)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: record intent: %w", err)
	}
	return id, nil
}

// intentRecord encodes the audit entry of a call about to run (Intent, QueueIntent).
func (s *Store) intentRecord(who, channel, command string) ([]byte, error) {
	val, err := json.Marshal(record{
		Time:    s.now(),
		Who:     CapString(who, MaxWho),
		Channel: CapString(channel, MaxWho),
		Command: CapString(command, MaxCommand),
	})
	if err != nil {
		return nil, fmt.Errorf("store: encode intent: %w", err)
	}
	return val, nil
}

// putIntent writes val as the next audit entry, pending, inside tx and returns its id.
func putIntent(tx *bolt.Tx, val []byte) (uint64, error) {
	b := tx.Bucket(bucketAudit)
	// The bucket sequence is stored in the same transaction as the entry, so an id is
	// never handed out twice for committed entries, and ids only grow.
	n, err := b.NextSequence()
	if err != nil {
		return 0, err
	}
	if err := b.Put(u64(n), val); err != nil {
		return 0, err
	}
	// The pending index makes Interrupted (run at every start) cost the number of
	// pending intents, not the size of the whole audit history.
	if err := tx.Bucket(bucketPending).Put(u64(n), nil); err != nil {
		return 0, err
	}
	return n, nil
}

// ErrNoIntent and ErrOutcomeRecorded are matched by errors.Is on Outcome's errors.
var (
	ErrNoIntent        = errors.New("no such audit intent")
	ErrOutcomeRecorded = errors.New("audit outcome already recorded")
)

// Outcome records how call id ended. Outcomes are written once: a second one is an error,
// because an audit whose results can be rewritten is not an audit.
//
// A disk too full to write it (even with the reserve released) does not lose
// it: the outcome is kept and written when there is space (FlushLate), marked
// as recorded late, and Outcome returns nil.
func (s *Store) Outcome(id uint64, ok bool, detail string) error {
	at := s.now()
	err := s.update(func(tx *bolt.Tx) error {
		return s.finish(tx, id, ok, CapString(detail, MaxDetail), false, at)
	})
	if isNoSpace(err) {
		s.keepLate(id, ok, detail, err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: record outcome of #%d: %w", id, err)
	}
	return nil
}

func (s *Store) finish(tx *bolt.Tx, id uint64, ok bool, detail string, interrupted bool, at time.Time) error {
	b := tx.Bucket(bucketAudit)
	key := u64(id)
	raw := b.Get(key)
	if raw == nil {
		return ErrNoIntent
	}
	var rec record
	if err := json.Unmarshal(raw, &rec); err != nil {
		return fmt.Errorf("decode entry: %w", err)
	}
	if rec.Done {
		return ErrOutcomeRecorded
	}
	rec.Done, rec.DoneTime, rec.OK, rec.Detail, rec.Interrupted = true, at, ok, detail, interrupted
	val, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode entry: %w", err)
	}
	if err := b.Put(key, val); err != nil {
		return err
	}
	return tx.Bucket(bucketPending).Delete(key)
}

// Interrupted is called once at daemon start, before anything new runs: every intent left
// without an outcome by a crash or power cut gets a failed, Interrupted outcome. It does
// not retry anything — whether the effect happened is unknown, and repeating a side effect
// (opening the garage door twice) is worse than reporting it.
func (s *Store) Interrupted() (int, error) {
	n := 0
	err := s.update(func(tx *bolt.Tx) error {
		// Collect first: deleting under a live cursor makes bbolt's Next skip keys.
		var ids []uint64
		c := tx.Bucket(bucketPending).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			if len(k) == 8 {
				ids = append(ids, binary.BigEndian.Uint64(k))
			}
		}
		for _, id := range ids {
			err := s.finish(tx, id, false, InterruptedDetail, true, s.now())
			switch {
			case err == nil:
				n++
			case errors.Is(err, ErrNoIntent), errors.Is(err, ErrOutcomeRecorded):
				// A stale index entry (cannot happen with atomic commits, but an index
				// must never block startup): drop it.
				if err := tx.Bucket(bucketPending).Delete(u64(id)); err != nil {
					return err
				}
			default:
				return fmt.Errorf("#%d: %w", id, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: mark interrupted intents: %w", err)
	}
	return n, nil
}

// Tail returns the last n entries, oldest first.
func (s *Store) Tail(n int) ([]AuditEntry, error) { return s.TailBefore(0, n) }

// TailBefore returns the last n entries with an id below before (0: the latest n),
// oldest first: a reader pages back through the trail with the first id it got.
func (s *Store) TailBefore(before uint64, n int) ([]AuditEntry, error) {
	if n <= 0 || before == 1 {
		return nil, nil
	}
	s.flushReads() // readaudit.go: the reader sees every call made before it asked
	var out []AuditEntry
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketAudit).Cursor()
		k, v := c.Last()
		if before > 0 {
			if k, v = c.Seek(u64(before)); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		var err error
		out, err = collect(k, v, c.Prev, n, decodeEntry)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: audit tail: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// AuditSince returns up to max entries with an id greater than afterID, oldest first
// (max <= 0: no limit): a reader that remembers the last id it saw reads on from there.
func (s *Store) AuditSince(afterID uint64, max int) ([]AuditEntry, error) {
	s.flushReads() // readaudit.go
	var out []AuditEntry
	err := s.db.View(func(tx *bolt.Tx) error {
		if afterID == ^uint64(0) {
			return nil // afterID+1 would wrap to 0 and return everything
		}
		c := tx.Bucket(bucketAudit).Cursor()
		k, v := c.Seek(u64(afterID + 1))
		var err error
		out, err = collect(k, v, c.Next, max, decodeEntry)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: audit since #%d: %w", afterID, err)
	}
	return out, nil
}

func decodeEntry(k, v []byte) (AuditEntry, error) {
	if len(k) != 8 {
		return AuditEntry{}, fmt.Errorf("audit key %x is not 8 bytes", k)
	}
	id := binary.BigEndian.Uint64(k)
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return AuditEntry{}, fmt.Errorf("decode #%d: %w", id, err)
	}
	return AuditEntry{
		ID: id, Time: r.Time, Who: r.Who, Channel: r.Channel, Command: r.Command,
		Done: r.Done, DoneTime: r.DoneTime, OK: r.OK, Detail: r.Detail, Interrupted: r.Interrupted,
	}, nil
}

// String is one line for `clawedge audit` and logs:
//
//	#12 2026-11-21T12:00:00Z console/stdin @gpio/write{pin="led";value=1} -> ok: led=1
//
// Newlines and other control characters in the command or detail are escaped so that one
// entry is always one line (a serial read full of \r\n must not forge extra entries).
func (e AuditEntry) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "#%d %s ", e.ID, e.Time.UTC().Format(time.RFC3339))
	switch {
	case e.Channel != "" && e.Who != "":
		sb.WriteString(oneLine(e.Channel) + "/" + oneLine(e.Who))
	case e.Channel != "":
		sb.WriteString(oneLine(e.Channel))
	case e.Who != "":
		sb.WriteString(oneLine(e.Who))
	default:
		sb.WriteString("-")
	}
	sb.WriteString(" " + oneLine(e.Command) + " -> ")
	switch {
	case !e.Done:
		sb.WriteString("(pending)")
		return sb.String()
	case e.Interrupted:
		// The detail already starts with "interrupted:"; "failed" would claim to know more
		// than we do.
		sb.WriteString(oneLine(e.Detail))
		return sb.String()
	case e.OK:
		sb.WriteString("ok")
	default:
		sb.WriteString("failed")
	}
	if e.Detail != "" {
		sb.WriteString(": " + oneLine(e.Detail))
	}
	return sb.String()
}

// CapString makes s valid UTF-8 (JSON would otherwise substitute bytes itself and grow the
// value past the cap) and cuts it to at most max bytes, on a rune boundary, ending in a
// marker that gives the original size. Everything the store keeps is capped this way.
func CapString(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= max {
		return s
	}
	marker := fmt.Sprintf(" …[truncated, %d bytes]", len(s))
	cut := max - len(marker)
	if cut < 0 {
		cut = 0
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + marker
}

// oneLine escapes control characters; everything else, quotes included, is left as typed.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	var sb strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x100 && isControl(r):
			fmt.Fprintf(&sb, `\x%02x`, r)
		case isControl(r):
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

// isControl covers C0, DEL, C1 (NEL, U+0085, is a line break to some terminals) and the
// Unicode line and paragraph separators.
func isControl(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029'
}
