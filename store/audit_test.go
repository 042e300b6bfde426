package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestIntentOutcomeTailSince(t *testing.T) {
	s := openT(t, t.TempDir())
	before := time.Now().UTC().Add(-time.Second)

	var ids []uint64
	for i := range 5 {
		id, err := s.Intent("stdin", "console", fmt.Sprintf("@gpio/write{pin=\"led\";value=%d}", i%2))
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 && id <= ids[len(ids)-1] {
			t.Fatalf("id %d after %d", id, ids[len(ids)-1])
		}
		ids = append(ids, id)
	}
	if err := s.Outcome(ids[0], true, "led=0"); err != nil {
		t.Fatal(err)
	}
	if err := s.Outcome(ids[1], false, "pin busy"); err != nil {
		t.Fatal(err)
	}

	all, err := s.Tail(100)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Fatalf("Tail(100) returned %d entries, want 5", len(all))
	}
	for i, e := range all {
		if e.ID != ids[i] {
			t.Errorf("Tail[%d].ID = %d, want %d (oldest first)", i, e.ID, ids[i])
		}
		if e.Who != "stdin" || e.Channel != "console" || e.Command != fmt.Sprintf("@gpio/write{pin=\"led\";value=%d}", i%2) {
			t.Errorf("Tail[%d] = %+v", i, e)
		}
		if e.Time.Before(before) || e.Time.Location() != time.UTC {
			t.Errorf("Tail[%d].Time = %v, want now in UTC", i, e.Time)
		}
	}
	if e := all[0]; !e.Done || !e.OK || e.Detail != "led=0" || e.DoneTime.Before(e.Time) || e.Interrupted {
		t.Errorf("ok outcome: %+v", e)
	}
	if e := all[1]; !e.Done || e.OK || e.Detail != "pin busy" {
		t.Errorf("failed outcome: %+v", e)
	}
	if e := all[2]; e.Done || !e.DoneTime.IsZero() {
		t.Errorf("pending entry: %+v", e)
	}

	last2, err := s.Tail(2)
	if err != nil || len(last2) != 2 || last2[0].ID != ids[3] || last2[1].ID != ids[4] {
		t.Fatalf("Tail(2) = %v, %v", last2, err)
	}
	if none, err := s.Tail(0); err != nil || len(none) != 0 {
		t.Errorf("Tail(0) = %v, %v", none, err)
	}

	since, err := s.AuditSince(ids[1], 2)
	if err != nil || len(since) != 2 || since[0].ID != ids[2] || since[1].ID != ids[3] {
		t.Fatalf("AuditSince(%d, 2) = %v, %v", ids[1], since, err)
	}
	if rest, err := s.AuditSince(ids[1], 0); err != nil || len(rest) != 3 {
		t.Errorf("AuditSince(%d, 0) = %d entries, %v; want 3 (no limit)", ids[1], len(rest), err)
	}
	if from0, _ := s.AuditSince(0, 0); len(from0) != 5 {
		t.Errorf("AuditSince(0, 0) = %d entries, want 5", len(from0))
	}
	for _, after := range []uint64{ids[4], ^uint64(0)} {
		if none, err := s.AuditSince(after, 10); err != nil || len(none) != 0 {
			t.Errorf("AuditSince(%d) = %v, %v; want nothing", after, none, err)
		}
	}
}

func TestOutcomeErrors(t *testing.T) {
	s := openT(t, t.TempDir())
	if err := s.Outcome(7, true, ""); !errors.Is(err, ErrNoIntent) {
		t.Errorf("Outcome on an unknown id: %v", err)
	}
	id, err := s.Intent("u", "c", "@sys/uptime{}")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Outcome(id, true, "first"); err != nil {
		t.Fatal(err)
	}
	if err := s.Outcome(id, false, "second"); !errors.Is(err, ErrOutcomeRecorded) {
		t.Errorf("second Outcome: %v", err)
	}
	e, _ := s.Tail(1)
	if !e[0].OK || e[0].Detail != "first" {
		t.Errorf("a refused second outcome changed the entry: %+v", e[0])
	}
}

func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	var ids []uint64
	for i := range 6 {
		id, err := s.Intent("u", "c", fmt.Sprintf("@sys/n{i=%d}", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// 0, 2, 3 finish; 1, 4, 5 are left pending, as a crash would leave them.
	for _, i := range []int{0, 2, 3} {
		if err := s.Outcome(ids[i], i != 2, "done"); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()

	s = openT(t, dir)
	n, err := s.Interrupted()
	if err != nil || n != 3 {
		t.Fatalf("Interrupted() = %d, %v; want 3", n, err)
	}
	all, _ := s.Tail(10)
	for i, e := range all {
		pending := i == 1 || i == 4 || i == 5
		if !e.Done {
			t.Errorf("#%d still pending", e.ID)
		}
		if e.Interrupted != pending {
			t.Errorf("#%d Interrupted = %v, want %v", e.ID, e.Interrupted, pending)
		}
		if pending && (e.OK || e.Detail != InterruptedDetail) {
			t.Errorf("#%d interrupted outcome: %+v", e.ID, e)
		}
		if !pending && e.Detail != "done" {
			t.Errorf("#%d finished entry was rewritten: %+v", e.ID, e)
		}
	}
	if n, err := s.Interrupted(); err != nil || n != 0 {
		t.Errorf("second Interrupted() = %d, %v; want 0", n, err)
	}
	if err := s.Outcome(ids[1], true, "late"); !errors.Is(err, ErrOutcomeRecorded) {
		t.Errorf("Outcome after Interrupted: %v", err)
	}
	if st, _ := s.Stats(); st.AuditPending != 0 || st.AuditEntries != 6 {
		t.Errorf("Stats = %+v", st)
	}
}

func TestCaps(t *testing.T) {
	s := openT(t, t.TempDir())
	huge := strings.Repeat("é", 10000) // 2-byte runes, so a byte cut could split one
	id, err := s.Intent(strings.Repeat("w", 1000), "console", huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Outcome(id, true, strings.Repeat("x", 1<<20)); err != nil {
		t.Fatal(err)
	}
	e, _ := s.Tail(1)
	got := e[0]
	if len(got.Command) > MaxCommand || !utf8.ValidString(got.Command) || !strings.HasSuffix(got.Command, "[truncated, 20000 bytes]") {
		t.Errorf("command: %d bytes, valid=%v, tail %q", len(got.Command), utf8.ValidString(got.Command), got.Command[len(got.Command)-40:])
	}
	if len(got.Command) < MaxCommand-64 {
		t.Errorf("command cut to %d bytes, far below the cap", len(got.Command))
	}
	if len(got.Detail) > MaxDetail || !strings.HasSuffix(got.Detail, "[truncated, 1048576 bytes]") {
		t.Errorf("detail: %d bytes, tail %q", len(got.Detail), got.Detail[len(got.Detail)-40:])
	}
	if len(got.Who) > MaxWho {
		t.Errorf("who: %d bytes", len(got.Who))
	}
	// Invalid UTF-8 (a binary serial read) is stored as valid text, still within the cap.
	id, _ = s.Intent("u", "c", "@serial/read{}")
	if err := s.Outcome(id, true, strings.Repeat("\xff\x00", 5000)); err != nil {
		t.Fatal(err)
	}
	e, _ = s.Tail(1)
	if !utf8.ValidString(e[0].Detail) || len(e[0].Detail) > MaxDetail {
		t.Errorf("binary detail: valid=%v len=%d", utf8.ValidString(e[0].Detail), len(e[0].Detail))
	}
	if st, _ := s.Stats(); st.FileSize > 1<<20 {
		t.Errorf("a 1 MiB detail grew the file to %d bytes", st.FileSize)
	}
}

func TestEntryString(t *testing.T) {
	at := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	e := AuditEntry{ID: 12, Time: at, Who: "stdin", Channel: "console", Command: `@gpio/write{pin="led";value=1}`,
		Done: true, DoneTime: at, OK: true, Detail: "led=1"}
	for _, c := range []struct {
		e    AuditEntry
		want string
	}{
		{e, `#12 2026-11-21T12:00:00Z console/stdin @gpio/write{pin="led";value=1} -> ok: led=1`},
		{AuditEntry{ID: 13, Time: at, Who: "stdin", Channel: "console", Command: "@sys/uptime{}"},
			`#13 2026-11-21T12:00:00Z console/stdin @sys/uptime{} -> (pending)`},
		{AuditEntry{ID: 14, Time: at.In(time.FixedZone("CET", 3600)), Channel: "telegram", Command: "@x/y{}", Done: true, Detail: "no such pin"},
			`#14 2026-11-21T12:00:00Z telegram @x/y{} -> failed: no such pin`},
		{AuditEntry{ID: 15, Time: at, Who: "1", Channel: "telegram", Command: "@x/y{}", Done: true, Interrupted: true, Detail: InterruptedDetail},
			`#15 2026-11-21T12:00:00Z telegram/1 @x/y{} -> ` + InterruptedDetail},
		{AuditEntry{ID: 16, Time: at, Who: "u", Channel: "c", Command: "@serial/read{}", Done: true, OK: true, Detail: "a\r\nb\x00\u2028c"},
			`#16 2026-11-21T12:00:00Z c/u @serial/read{} -> ok: a\r\nb\x00\u2028c`},
		{AuditEntry{ID: 17, Time: at, Who: "u", Channel: "c", Command: "@x/y{}", Done: true, OK: true},
			`#17 2026-11-21T12:00:00Z c/u @x/y{} -> ok`},
	} {
		if got := c.e.String(); got != c.want {
			t.Errorf("String()\n got %s\nwant %s", got, c.want)
		}
		if strings.ContainsAny(c.e.String(), "\n\r") {
			t.Errorf("String() of #%d is not one line", c.e.ID)
		}
	}
}

// BenchmarkIntentOutcome measures one audited call: an Intent commit and an Outcome commit,
// each of which fsyncs (fdatasync) the file, so the figure is dominated by the disk's sync
// latency, not by encoding — expect milliseconds per op on an SD card.
func BenchmarkIntentOutcome(b *testing.B) {
	s := openT(b, b.TempDir())
	b.ReportAllocs()
	for b.Loop() {
		id, err := s.Intent("stdin", "console", `@gpio/write{pin="led";value=1}`)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Outcome(id, true, "led=1"); err != nil {
			b.Fatal(err)
		}
	}
}
