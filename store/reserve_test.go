package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/internal/disktest"
	bolt "go.etcd.io/bbolt"
)

// On a full disk the store releases its reserve and the audit trail goes on;
// without one, calls would be refused (their intent cannot be written).
func TestReserveKeepsAuditGoingOnFullDisk(t *testing.T) {
	for _, reserve := range []int64{-1, 256 << 10} {
		t.Run(fmt.Sprint(reserve), func(t *testing.T) {
			dir := disktest.Small(t, "1m")
			var warned []string
			s, err := Open(dir, Options{Reserve: reserve, Warn: func(m string) { warned = append(warned, m) }})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			disktest.Fill(t, dir)
			var failed error
			for i := 0; i < 300 && failed == nil; i++ {
				_, failed = s.Intent("me", "test", fmt.Sprintf("@sys/echo{text=%q}", strings.Repeat("x", 100)))
			}
			if reserve < 0 {
				if !errors.Is(failed, syscall.ENOSPC) {
					t.Fatalf("without a reserve, 300 intents on a full disk: %v (the test's premise)", failed)
				}
				return
			}
			if failed != nil {
				t.Fatalf("intent on a full disk: %v", failed)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], "DISK FULL") || !strings.Contains(warned[0], "released the store's") {
				t.Errorf("warnings %q", warned)
			}
			if _, err := os.Stat(filepath.Join(dir, FileName+ReserveSuffix)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("reserve file: %v", err)
			}
			if got, err := s.Tail(1); err != nil || len(got) != 1 {
				t.Errorf("audit read: %v", err)
			}
		})
	}
}

// An outcome the full disk refused is written when there is space again, as
// recorded late, not left for the next start to call interrupted.
func TestOutcomeRecordedLate(t *testing.T) {
	dir := t.TempDir()
	var warned []string
	s, err := Open(dir, Options{Warn: func(m string) { warned = append(warned, m) }})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Intent("me", "test", `@gpio/write{pin="door";value=1}`)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, FileName+ReserveSuffix)) // the reserve is already used up
	real := s.commit
	s.commit = func(func(*bolt.Tx) error) error { return fmt.Errorf("write: %w", syscall.ENOSPC) }
	if err := s.Outcome(id, true, "door = 1"); err != nil {
		t.Fatalf("Outcome on a full disk: %v (want it kept for later)", err)
	}
	if s.Late() != 1 || len(warned) != 1 || !strings.Contains(warned[0], fmt.Sprintf("outcome of audit entry #%d is kept", id)) {
		t.Errorf("late %d, warnings %q", s.Late(), warned)
	}
	s.commit = real
	if err := s.Close(); err != nil { // space is back by the stop
		t.Fatal(err)
	}
	s = openT(t, dir)
	if n, err := s.Interrupted(); err != nil || n != 0 {
		t.Errorf("Interrupted: %d, %v: the call finished, its outcome was only late", n, err)
	}
	got, _ := s.Tail(1)
	if len(got) != 1 || !got[0].Done || !got[0].OK || got[0].Interrupted || got[0].Detail != "door = 1"+LateNote {
		t.Errorf("entry %+v", got)
	}
	if got[0].DoneTime.After(time.Now()) || got[0].DoneTime.IsZero() {
		t.Errorf("done time %v", got[0].DoneTime)
	}
}
