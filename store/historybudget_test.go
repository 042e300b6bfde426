package store

import (
	"fmt"
	"testing"
	"time"
)

// The sensor history takes its share of the budget: retention keeps the
// audit trail within the budget less the history's reserve (the size of
// its series when full), so the whole store stays within the budget while
// the rings fill, the history is never pruned, and Usage says what the
// history takes and has reserved.
func TestRetentionLeavesTheHistoryItsShare(t *testing.T) {
	s := openT(t, t.TempDir())
	const budget = 2 << 20
	s.SetRetention(Retention{MaxBytes: budget})
	h, err := s.History(HistoryOptions{Tiers: []HistoryTier{{time.Minute, 600}, {time.Hour, 200}}, FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	const series = 8
	sample := func(from, to time.Time) {
		for at := from; at.Before(to); at = at.Add(time.Minute) {
			for i := range series {
				if err := h.Add(fmt.Sprintf("s%d/temperature", i), at, 20+float64(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := h.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// An hour of samples: the series are known, far from full.
	sample(t0, t0.Add(time.Hour))
	u, err := s.Usage()
	if err != nil {
		t.Fatal(err)
	}
	reserved := int64(series) * h.SeriesBytes()
	if u.History.Series != series || u.History.Reserved != reserved || u.History.Bytes >= reserved {
		t.Fatalf("history usage %+v; want %d series, %d bytes reserved, less taken", u.History, series, reserved)
	}
	allow := allowance(budget, u.History)
	if allow != budget-reserved {
		t.Fatalf("allowance %d, want the budget less the reserve, %d", allow, budget-reserved)
	}
	check := func(when string) {
		t.Helper()
		if _, err := s.Prune(); err != nil {
			t.Fatal(err)
		}
		u, err := s.Usage()
		if err != nil {
			t.Fatal(err)
		}
		if others := s.liveBytes() - u.History.Bytes; others > allow*85/100 {
			t.Errorf("%s: the audit trail takes %d bytes, past 85 %% of its %d beside the history", when, others, allow)
		}
		if live := s.liveBytes(); live > budget {
			t.Errorf("%s: %d bytes live, over the budget of %d", when, live, budget)
		}
		if es, _ := s.Tail(10); len(es) == 0 {
			t.Errorf("%s: retention dropped the whole audit trail", when)
		}
	}
	for range 10 {
		fill(t, s, 40, 4000)
		check("an hour of history")
	}
	// The rings fill (200 hours: both tiers wrap); the audit keeps writing.
	sample(t0.Add(time.Hour), t0.Add(201*time.Hour))
	for range 10 {
		fill(t, s, 40, 4000)
		check("the history full")
	}
	u, _ = s.Usage()
	if u.History.Bytes > u.History.Reserved {
		t.Errorf("the full history takes %d bytes, past its reserve of %d (HistoryBytesPerRecord %d too small)", u.History.Bytes, u.History.Reserved, HistoryBytesPerRecord)
	}
	// Retention dropped audit entries, never history.
	if u.Dropped.Audit.Count == 0 {
		t.Error("nothing dropped: the test did not reach the budget")
	}
	for i := range series {
		pts, err := h.Query(fmt.Sprintf("s%d/temperature", i), t0.Add(195*time.Hour), t0.Add(200*time.Hour), 5)
		if err != nil || len(pts) != 5 || pts[0].Count != 60 {
			t.Errorf("series %d after retention: %d points, %v", i, len(pts), err)
		}
	}
	t.Logf("budget %d KiB: history %d KiB of %d KiB reserved for %d series; the rest %d KiB",
		budget>>10, u.History.Bytes>>10, u.History.Reserved>>10, series, (s.liveBytes()-u.History.Bytes)>>10)
}

// A history larger than the budget leaves the audit trail a quarter of it,
// rather than have retention drop every entry.
func TestAllowanceFloor(t *testing.T) {
	if got := allowance(4<<20, HistoryUsage{Series: 10, Reserved: 12 << 20, Bytes: 1 << 20}); got != 1<<20 {
		t.Errorf("allowance %d, want a quarter of the budget", got)
	}
	if got := allowance(4<<20, HistoryUsage{Series: 1, Reserved: 1 << 20, Bytes: 2 << 20}); got != 2<<20 {
		t.Errorf("allowance %d: a history past its reserve counts at its size", got)
	}
}
