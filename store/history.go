package store

// This file: the history of sensor readings, kept within a fixed size by
// construction. Each series (a sensor's quantity, "greenhouse/temperature")
// has tiers of buckets: by default one-minute buckets for 7 days and
// one-hour buckets for a year. A bucket holds the min, mean, max and count of
// the samples in its span. Each tier is a ring: the bucket of time t is in
// slot (t / width) mod slots, so a new bucket replaces the one a whole ring
// older and a series never holds more than the sum of its tiers' slots,
// however long the board samples.
//
// Samples are added in memory and written in one transaction at most once
// a FlushEvery (a minute by default): a board's flash should not take an
// fsync per sample. A crash loses at most that much; a bucket written while
// open is merged with, not replaced by, the samples after a restart.
//
// Layout, under the root bucket "history", created on first use:
//
//	SERIES      one nested bucket per series
//	  TIER      one nested bucket per tier, named by its width ("1m0s")
//	    big-endian uint32 slot -> record (historyRecordSize bytes, below)

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

var bucketHistory = []byte("history")

// HistoryTier is one resolution of a series: buckets Width wide, Slots of them.
type HistoryTier struct {
	Width time.Duration
	Slots int
}

// Span is how far back the tier reaches.
func (t HistoryTier) Span() time.Duration { return t.Width * time.Duration(t.Slots) }

// DefaultHistoryTiers are one-minute buckets for 7 days and one-hour buckets
// for a year.
var DefaultHistoryTiers = []HistoryTier{{time.Minute, 7 * 24 * 60}, {time.Hour, 365 * 24}}

// HistoryOptions configure a History; the zero value is the defaults.
type HistoryOptions struct {
	// Tiers, finest first; nil: DefaultHistoryTiers.
	Tiers []HistoryTier
	// FlushEvery is how long samples may wait in memory; 0: a minute.
	FlushEvery time.Duration
}

// Point is one bucket of a series, or several merged for a query.
type Point struct {
	Start, End     time.Time
	Min, Mean, Max float64
	Count          int
}

// MaxSeriesName bounds a series' name: it is a bbolt key.
const MaxSeriesName = 128

// A record: the bucket's start (Unix seconds), the count, min, max and
// mean. Float32 keeps a sensor's resolution (7 significant digits, where a
// BME280 gives 5) in 8 bytes less than float64 would, 18 % of a record.
const historyRecordSize = 8 + 4 + 4 + 4 + 4

type histAgg struct {
	start          int64 // Unix seconds
	count          uint32
	min, max, mean float64
	dirty          bool
}

func (a *histAgg) add(v float64) {
	if a.count == 0 {
		a.min, a.max, a.mean = v, v, v
	} else {
		a.min, a.max = math.Min(a.min, v), math.Max(a.max, v)
		a.mean += (v - a.mean) / float64(a.count+1)
	}
	a.count++
	a.dirty = true
}

func (a *histAgg) merge(b histAgg) {
	if b.count == 0 {
		return
	}
	if a.count == 0 {
		*a = b
		return
	}
	n := float64(a.count) + float64(b.count)
	a.mean = a.mean*float64(a.count)/n + b.mean*float64(b.count)/n
	a.min, a.max = math.Min(a.min, b.min), math.Max(a.max, b.max)
	a.count += b.count
}

func (a *histAgg) encode() []byte {
	var b [historyRecordSize]byte
	binary.BigEndian.PutUint64(b[0:], uint64(a.start))
	binary.BigEndian.PutUint32(b[8:], a.count)
	binary.BigEndian.PutUint32(b[12:], math.Float32bits(float32(a.min)))
	binary.BigEndian.PutUint32(b[16:], math.Float32bits(float32(a.max)))
	binary.BigEndian.PutUint32(b[20:], math.Float32bits(float32(a.mean)))
	return b[:]
}

func decodeAgg(b []byte) (histAgg, bool) {
	if len(b) != historyRecordSize {
		return histAgg{}, false
	}
	return histAgg{
		start: int64(binary.BigEndian.Uint64(b[0:])),
		count: binary.BigEndian.Uint32(b[8:]),
		min:   float64(math.Float32frombits(binary.BigEndian.Uint32(b[12:]))),
		max:   float64(math.Float32frombits(binary.BigEndian.Uint32(b[16:]))),
		mean:  float64(math.Float32frombits(binary.BigEndian.Uint32(b[20:]))),
	}, true
}

// History is the downsampled history of many series in the store. It is
// safe for concurrent use.
type History struct {
	s     *Store
	tiers []HistoryTier
	every time.Duration

	mu        sync.Mutex
	open      map[string][]histAgg // per series, the open bucket of each tier
	closed    []closedAgg          // buckets closed since the last write
	lastFlush time.Time
}

// closedAgg is a bucket that closed before it was written.
type closedAgg struct {
	series string
	tier   int
	agg    histAgg
}

// History returns the store's history with opts.
func (s *Store) History(opts HistoryOptions) (*History, error) {
	tiers := opts.Tiers
	if tiers == nil {
		tiers = DefaultHistoryTiers
	}
	for i, t := range tiers {
		if t.Width < time.Second || t.Width%time.Second != 0 || t.Slots < 1 || t.Slots > 1<<20 {
			return nil, fmt.Errorf("store: history tier %d: width %v and %d slots: want whole seconds and 1 to %d slots", i, t.Width, t.Slots, 1<<20)
		}
		if i > 0 && (t.Width <= tiers[i-1].Width || t.Span() < tiers[i-1].Span()) {
			return nil, fmt.Errorf("store: history tier %d (%v × %d) must be coarser and reach further than the one before", i, t.Width, t.Slots)
		}
	}
	every := opts.FlushEvery
	if every <= 0 {
		every = time.Minute
	}
	h := &History{s: s, tiers: slices.Clone(tiers), every: every, open: map[string][]histAgg{}}
	s.history.h.Store(h) // its share of the budget (historybudget.go)
	return h, nil
}

// seriesKnown is how many series have samples in memory: those not yet
// written count towards the reserve too.
func (h *History) seriesKnown() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.open)
}

// Tiers are the history's tiers, finest first.
func (h *History) Tiers() []HistoryTier { return slices.Clone(h.tiers) }

// MaxRecords is the most records one series can ever hold.
func (h *History) MaxRecords() int {
	n := 0
	for _, t := range h.tiers {
		n += t.Slots
	}
	return n
}

func checkSeries(series string) error {
	if series == "" || len(series) > MaxSeriesName || strings.ContainsFunc(series, isControl) {
		return fmt.Errorf("store: history series %q: want 1 to %d printable bytes", series, MaxSeriesName)
	}
	return nil
}

func tierName(t HistoryTier) []byte { return []byte(t.Width.String()) }

func slotKey(t HistoryTier, start int64) []byte {
	var k [4]byte
	binary.BigEndian.PutUint32(k[:], uint32((start/int64(t.Width/time.Second))%int64(t.Slots)))
	return k[:]
}

func (h *History) bucketStart(t HistoryTier, at time.Time) int64 {
	w := int64(t.Width / time.Second)
	s := at.Unix()
	return s - ((s%w)+w)%w
}

// Add records a sample of series at t. It writes to the store only when
// FlushEvery has passed since the last write (by the samples' own clock, so
// a test's fake clock drives it too). NaN and infinities are refused: a
// reading that is not a number is a gap, not a value.
func (h *History) Add(series string, t time.Time, v float64) error {
	if err := checkSeries(series); err != nil {
		return err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("store: history %s: %v is not a reading", series, v)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	aggs := h.open[series]
	if aggs == nil {
		aggs = make([]histAgg, len(h.tiers))
		h.open[series] = aggs
	}
	for i, tier := range h.tiers {
		start := h.bucketStart(tier, t)
		a := &aggs[i]
		switch {
		case a.count > 0 && start < a.start:
			// A sample older than the open bucket (a clock stepped
			// back): it is dropped rather than reopening history.
			continue
		case a.count == 0 || start > a.start:
			if a.dirty {
				h.closed = append(h.closed, closedAgg{series, i, *a})
			}
			prev, err := h.stored(series, tier, start)
			if err != nil {
				return err
			}
			*a = prev
			a.start = start
		}
		a.add(v)
	}
	if h.lastFlush.IsZero() {
		h.lastFlush = t
	}
	if t.Sub(h.lastFlush) >= h.every {
		h.lastFlush = t
		return h.writeLocked()
	}
	return nil
}

// stored is the record at start's slot when it is that bucket (written
// before a restart), else an empty bucket.
func (h *History) stored(series string, tier HistoryTier, start int64) (histAgg, error) {
	var a histAgg
	err := h.s.db.View(func(tx *bolt.Tx) error {
		b := historyTier(tx, series, tier)
		if b == nil {
			return nil
		}
		if got, ok := decodeAgg(b.Get(slotKey(tier, start))); ok && got.start == start {
			a = got
		}
		return nil
	})
	if err != nil {
		return a, fmt.Errorf("store: history %s: %w", series, err)
	}
	return a, nil
}

func historyTier(tx *bolt.Tx, series string, tier HistoryTier) *bolt.Bucket {
	root := tx.Bucket(bucketHistory)
	if root == nil {
		return nil
	}
	sb := root.Bucket([]byte(series))
	if sb == nil {
		return nil
	}
	return sb.Bucket(tierName(tier))
}

// Flush writes what waits in memory.
func (h *History) Flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writeLocked()
}

// writeLocked writes the closed buckets and the dirty open ones in one
// transaction.
func (h *History) writeLocked() error {
	recs := slices.Clone(h.closed)
	for series, as := range h.open {
		for i, a := range as {
			if a.dirty {
				recs = append(recs, closedAgg{series, i, a})
			}
		}
	}
	if len(recs) == 0 {
		return nil
	}
	err := h.s.update(func(tx *bolt.Tx) error {
		root, err := tx.CreateBucketIfNotExists(bucketHistory)
		if err != nil {
			return err
		}
		for _, r := range recs {
			sb, err := root.CreateBucketIfNotExists([]byte(r.series))
			if err != nil {
				return err
			}
			tb, err := sb.CreateBucketIfNotExists(tierName(h.tiers[r.tier]))
			if err != nil {
				return err
			}
			// Slots are written in rising order until the ring wraps,
			// then rewritten in place: pages may be full.
			tb.FillPercent = 0.9
			if err := tb.Put(slotKey(h.tiers[r.tier], r.agg.start), r.agg.encode()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: writing the history: %w", err)
	}
	h.closed = h.closed[:0]
	for _, as := range h.open {
		for i := range as {
			as[i].dirty = false
		}
	}
	return nil
}

// Query returns series from since up to (not including) until in at most points points, each
// the merge of the buckets in its share of the span (time, min, mean, max,
// count), from the finest tier that reaches back to since. Spans with no
// sample have no point: a gap stays a gap.
func (h *History) Query(series string, since, until time.Time, points int) ([]Point, error) {
	if err := checkSeries(series); err != nil {
		return nil, err
	}
	if points < 1 || points > 10000 {
		return nil, fmt.Errorf("store: history query: %d points: want 1 to 10000", points)
	}
	if !since.Before(until) {
		return nil, fmt.Errorf("store: history query: since %v is not before until %v", since, until)
	}
	tier := h.tiers[len(h.tiers)-1]
	ti := len(h.tiers) - 1
	for i, t := range h.tiers {
		if until.Sub(since) <= t.Span() {
			tier, ti = t, i
			break
		}
	}
	// Not further back than the tier keeps: older slots hold newer buckets.
	if oldest := until.Add(-tier.Span() + tier.Width); since.Before(oldest) {
		since = oldest
	}
	first, last := h.bucketStart(tier, since), h.bucketStart(tier, until.Add(-time.Nanosecond)) // until is not in the span
	w := int64(tier.Width / time.Second)
	n := (last-first)/w + 1
	per := (n + int64(points) - 1) / int64(points) // buckets a point
	out := make([]Point, 0, points)

	// Memory has buckets newer than the store's: the open one (its
	// stored part and what came since) and those closed since the last
	// write.
	mem := map[int64]histAgg{}
	h.mu.Lock()
	for _, c := range h.closed {
		if c.series == series && c.tier == ti {
			mem[c.agg.start] = c.agg
		}
	}
	if as := h.open[series]; as != nil && as[ti].count > 0 {
		mem[as[ti].start] = as[ti]
	}
	h.mu.Unlock()

	err := h.s.db.View(func(tx *bolt.Tx) error {
		b := historyTier(tx, series, tier)
		for p := first; p <= last; p += per * w {
			var m histAgg
			for s := p; s < p+per*w && s <= last; s += w {
				var a histAgg
				if b != nil {
					if got, ok := decodeAgg(b.Get(slotKey(tier, s))); ok && got.start == s {
						a = got
					}
				}
				if got, ok := mem[s]; ok {
					a = got
				}
				m.merge(a)
			}
			if m.count > 0 {
				end := min(p+per*w, last+w)
				out = append(out, Point{Start: time.Unix(p, 0).UTC(), End: time.Unix(end, 0).UTC(),
					Min: m.min, Mean: m.mean, Max: m.max, Count: int(m.count)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: history %s: %w", series, err)
	}
	return out, nil
}

// HistorySize is what the history holds in the store.
type HistorySize struct {
	Series  int
	Records int
}

// Size counts the series and records the history holds.
func (h *History) Size() (HistorySize, error) {
	var sz HistorySize
	err := h.s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketHistory)
		if root == nil {
			return nil
		}
		return root.ForEachBucket(func(k []byte) error {
			sz.Series++
			return root.Bucket(k).ForEachBucket(func(t []byte) error {
				sz.Records += root.Bucket(k).Bucket(t).Stats().KeyN
				return nil
			})
		})
	})
	if err != nil {
		return sz, fmt.Errorf("store: history size: %w", err)
	}
	return sz, nil
}
