package store

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func TestHistoryDownsamples(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	h, err := s.History(HistoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Three hours at one sample each 30 s: a ramp from 0 by 0.5 a sample.
	n := 0
	for at := t0; at.Before(t0.Add(3 * time.Hour)); at = at.Add(30 * time.Second) {
		if err := h.Add("gh/temperature", at, float64(n)*0.5); err != nil {
			t.Fatal(err)
		}
		n++
	}
	until := t0.Add(3 * time.Hour)
	pts, err := h.Query("gh/temperature", until.Add(-3*time.Hour), until, 6)
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 6 {
		t.Fatalf("%d points, want 6: %+v", len(pts), pts)
	}
	for i, p := range pts {
		// Each point is half an hour: 60 samples, values 30i .. 30i+29.5.
		lo := float64(i) * 30
		if p.Count != 60 || p.Min != lo || p.Max != lo+29.5 || math.Abs(p.Mean-(lo+14.75)) > 1e-3 {
			t.Errorf("point %d = %+v; want 60 samples, min %g, mean %g, max %g", i, p, lo, lo+14.75, lo+29.5)
		}
		if p.End.Sub(p.Start) != 30*time.Minute || !p.Start.Equal(t0.Add(time.Duration(i)*30*time.Minute)) {
			t.Errorf("point %d spans %v..%v", i, p.Start, p.End)
		}
	}
	// More points than minutes: one a bucket.
	pts, _ = h.Query("gh/temperature", t0, t0.Add(10*time.Minute), 60)
	if len(pts) != 10 || pts[0].Count != 2 {
		t.Errorf("10 minutes at 60 points: %d points, first %+v; want 10 of 2 samples", len(pts), pts[0])
	}
	// Beyond 7 days the hourly tier answers.
	pts, _ = h.Query("gh/temperature", until.Add(-30*24*time.Hour), until, 1000)
	if len(pts) != 3 || pts[0].Count != 120 || pts[0].End.Sub(pts[0].Start) != time.Hour {
		t.Errorf("30 days: %d points, first %+v; want the 3 hours", len(pts), pts)
	}
	// A gap is a gap.
	if pts, _ := h.Query("gh/temperature", until.Add(time.Hour), until.Add(2*time.Hour), 10); len(pts) != 0 {
		t.Errorf("a span without samples has %d points", len(pts))
	}
	if pts, _ := h.Query("nobody/temperature", t0, until, 10); len(pts) != 0 {
		t.Errorf("an unknown series has %d points", len(pts))
	}
}

func TestHistoryRefuses(t *testing.T) {
	s := openT(t, t.TempDir())
	defer s.Close()
	h, _ := s.History(HistoryOptions{})
	for _, tc := range []struct {
		err  error
		want string
	}{
		{h.Add("a/t", t0, math.NaN()), "NaN is not a reading"},
		{h.Add("a/t", t0, math.Inf(1)), "+Inf is not a reading"},
		{h.Add("", t0, 1), `series ""`},
		{h.Add(strings.Repeat("x", 200), t0, 1), "want 1 to 128"},
		{h.Add("a\nb", t0, 1), "printable"},
		{func() error { _, err := h.Query("a/t", t0, t0.Add(time.Hour), 0); return err }(), "0 points"},
		{func() error { _, err := h.Query("a/t", t0, t0, 10); return err }(), "is not before"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("error %v, want %q", tc.err, tc.want)
		}
	}
	if _, err := s.History(HistoryOptions{Tiers: []HistoryTier{{time.Hour, 10}, {time.Minute, 10}}}); err == nil {
		t.Error("tiers finest last were accepted")
	}
}

// A bucket written while open is merged with what comes after a restart.
func TestHistoryRestartMerges(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	h, _ := s.History(HistoryOptions{})
	h.Add("a/t", t0.Add(5*time.Second), 10)
	h.Add("a/t", t0.Add(10*time.Second), 20)
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openT(t, dir)
	defer s.Close()
	h, _ = s.History(HistoryOptions{})
	h.Add("a/t", t0.Add(20*time.Second), 30)
	pts, err := h.Query("a/t", t0, t0.Add(time.Minute), 1)
	if err != nil || len(pts) != 1 || pts[0].Count != 3 || pts[0].Min != 10 || pts[0].Max != 30 || pts[0].Mean != 20 {
		t.Errorf("after a restart: %+v, %v; want 3 samples 10..30, mean 20", pts, err)
	}
}

// A year and more of sampling never grows a series past its tiers' slots,
// and the file stops growing once the rings are full.
func TestHistoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a year of history")
	}
	dir := t.TempDir()
	s := openT(t, dir)
	defer s.Close()
	h, err := s.History(HistoryOptions{FlushEvery: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	series := []string{"greenhouse/temperature", "greenhouse/humidity"}
	// One sample a minute for 400 days: more than both rings hold.
	end := t0.Add(400 * 24 * time.Hour)
	var sizeAtYear int64
	for at := t0; at.Before(end); at = at.Add(time.Minute) {
		for i, sr := range series {
			if err := h.Add(sr, at, 20+float64(i)+math.Sin(float64(at.Unix())/3600)); err != nil {
				t.Fatal(err)
			}
		}
		if sizeAtYear == 0 && at.Sub(t0) >= 366*24*time.Hour {
			sizeAtYear = fileSize(t, dir)
		}
	}
	if err := h.Flush(); err != nil {
		t.Fatal(err)
	}
	sz, err := h.Size()
	if err != nil {
		t.Fatal(err)
	}
	if want := len(series) * h.MaxRecords(); sz.Series != len(series) || sz.Records != want {
		t.Errorf("%+v; want %d series and exactly %d records (the rings full)", sz, len(series), want)
	}
	final := fileSize(t, dir)
	t.Logf("%d records a series; store file %d KiB after a year, %d KiB after 400 days (%d KiB a series at most)",
		h.MaxRecords(), sizeAtYear>>10, final>>10, final/int64(len(series))>>10)
	if final > sizeAtYear+sizeAtYear/10 {
		t.Errorf("the file grew from %d to %d bytes after the rings were full", sizeAtYear, final)
	}
	if per := final / int64(len(series)); per > 2<<20 {
		t.Errorf("%d bytes a series, over the 2 MiB budget", per)
	}
	// In the store's budget: what the full rings take is within what the
	// history reserves of it (HistoryBytesPerRecord), at most 2 MiB a series.
	u, err := s.Usage()
	if err != nil {
		t.Fatal(err)
	}
	if u.History.Series != len(series) || u.History.Reserved != int64(len(series))*h.SeriesBytes() || u.History.Bytes > u.History.Reserved ||
		h.SeriesBytes() > 2<<20 {
		t.Errorf("history usage %+v: want %d series, taking at most the %d bytes reserved (%d a series, at most 2 MiB)",
			u.History, len(series), int64(len(series))*h.SeriesBytes(), h.SeriesBytes())
	}
	t.Logf("the full rings take %d bytes a record of the store's pages (%d reserved)", u.History.Bytes/int64(sz.Records), HistoryBytesPerRecord)
	// The oldest minute buckets were replaced: the 7-day tier reaches back 7 days only.
	pts, _ := h.Query(series[0], end.Add(-7*24*time.Hour), end, 7)
	if len(pts) != 7 || pts[0].Count != 24*60 {
		t.Errorf("the last week: %d points, first %+v", len(pts), pts)
	}
	pts, _ = h.Query(series[0], end.Add(-365*24*time.Hour), end, 12)
	total := 0
	for _, p := range pts {
		total += p.Count
	}
	if len(pts) != 12 || total < 364*24*60 {
		t.Errorf("the last year: %d points, %d samples", len(pts), total)
	}
}

func fileSize(t *testing.T, dir string) int64 {
	fi, err := os.Stat(filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
