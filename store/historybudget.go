package store

// This file: the sensor history inside the store's budget. The history
// keeps itself within a fixed size by construction (history.go: each tier
// a ring), so retention cannot and need not drop from it; but it takes its
// share of store.budget. Its share is reserved up front, the size of every
// series it has when full, so that the audit trail's reach does not shrink
// month after month while the rings fill: retention keeps the audit trail
// and the model steps within the budget less that reserve (and never less
// than a quarter of the budget, however many series the history has:
// status and doctor then say the history is past its share).

import (
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// HistoryBytesPerRecord is what one record of the history takes of the
// store file: its 24 bytes, its 4-byte key, bbolt's 16-byte element header,
// and the pages' fill (90 %, written in place once a ring wraps).
// TestHistoryBudget measures it on a real file (51 bytes with the default
// tiers), TestRetentionLeavesTheHistoryItsShare with small rings, where the
// pages beside the records weigh more.
const HistoryBytesPerRecord = 64

// HistoryUsage is the history's part of the store.
type HistoryUsage struct {
	Series int   // the series it holds (a sensor's quantity each)
	Bytes  int64 // what its pages take now
	// Reserved is what its series take when full: its share of the budget.
	Reserved int64
}

// historyState is the store's view of its history for the budget: the
// History opened on it (nil: none, as a read-only store for status has),
// and the last measure, for the cheap check after each write.
type historyState struct {
	h     atomic.Pointer[History]
	bytes atomic.Int64 // the history's pages at the last measure
	allow atomic.Int64 // what the rest of the data may take at the last measure; 0: not measured
}

// A series' pages beside its records: each tier is a nested bucket with its
// branch page and partly filled leaves, and the series one more.
const (
	historyTierOverhead   = 6 * 4096
	historySeriesOverhead = 4096
)

// SeriesBytes is what one series takes of the store when full.
func (h *History) SeriesBytes() int64 { return seriesBytes(h.tiers) }

func seriesBytes(tiers []HistoryTier) int64 {
	n := int64(historySeriesOverhead)
	for _, t := range tiers {
		n += int64(t.Slots)*HistoryBytesPerRecord + historyTierOverhead
	}
	return n
}

// historyUsage measures the history in tx.
func (s *Store) historyUsage(tx *bolt.Tx) HistoryUsage {
	var u HistoryUsage
	per := seriesBytes(DefaultHistoryTiers) // a read-only store's, for status
	h := s.history.h.Load()
	if h != nil {
		per = h.SeriesBytes()
	}
	if root := tx.Bucket(bucketHistory); root != nil {
		st := root.Stats()
		u.Bytes = int64(st.BranchAlloc + st.LeafAlloc)
		root.ForEachBucket(func([]byte) error { u.Series++; return nil })
	}
	if h != nil {
		u.Series = max(u.Series, h.seriesKnown())
	}
	u.Reserved = int64(u.Series) * per
	return u
}

// allowance is what the store's other data (the audit trail, the model
// steps, ...) may take of budget beside the history h: the budget less the
// history's reserve (or its size, if larger), at least a quarter of it.
func allowance(budget int64, h HistoryUsage) int64 {
	return max(budget-max(h.Reserved, h.Bytes), budget/4)
}

// measureHistory measures the history and notes it for notePressure.
func (s *Store) measureHistory(budget int64) HistoryUsage {
	var u HistoryUsage
	s.db.View(func(tx *bolt.Tx) error { u = s.historyUsage(tx); return nil })
	s.history.bytes.Store(u.Bytes)
	s.history.allow.Store(allowance(budget, u))
	return u
}
