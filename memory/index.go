package memory

// This file: the search index, derived from the entries and rebuilt whenever
// MEMORY.md changes: an inverted index of stems, ranked by Okapi BM25. It
// lives in memory only (nothing on disk to go stale); its size is bounded by
// the file's, which is bounded.

import (
	"math"
	"slices"
	"strings"
)

// BM25's usual constants: term frequency saturation and length normalisation.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

type posting struct {
	doc int32
	tf  uint16
}

type index struct {
	postings map[string][]posting
	length   []uint16 // terms per entry
	avg      float64
	scores   []float64 // scratch of search, zero between searches (the caller serialises them)
}

// indexText is what an entry is found by: its text, tags and heading.
func indexText(e *Entry) string {
	return e.Text + " " + strings.Join(e.Tags, " ") + " " + e.Section
}

func buildIndex(entries []*Entry) *index {
	ix := &index{postings: map[string][]posting{}, length: make([]uint16, len(entries))}
	total := 0
	counts := map[string]int{}
	for i, e := range entries {
		clear(counts)
		ts := terms(indexText(e))
		for _, t := range ts {
			counts[t]++
		}
		for t, n := range counts {
			ix.postings[t] = append(ix.postings[t], posting{int32(i), uint16(min(n, math.MaxUint16))})
		}
		ix.length[i] = uint16(min(len(ts), math.MaxUint16))
		total += len(ts)
	}
	if len(entries) > 0 {
		ix.avg = float64(total) / float64(len(entries))
	}
	return ix
}

// hit is one ranked entry (an index into the entries the index was built on).
type hit struct {
	doc   int
	score float64
}

// search ranks the entries for query and returns the best n (score > 0) of
// those keep takes (nil: all): an entry left out is never a hit, however
// well it matches.
func (ix *index) search(query string, n int, keep func(doc int) bool) []hit {
	if n <= 0 {
		return nil
	}
	qs := terms(query)
	slices.Sort(qs)
	qs = slices.Compact(qs)
	N := float64(len(ix.length))
	if len(ix.scores) != len(ix.length) {
		ix.scores = make([]float64, len(ix.length))
	}
	scores := ix.scores
	var touched []int32
	defer func() {
		for _, d := range touched {
			scores[d] = 0
		}
	}()
	for _, q := range qs {
		ps := ix.postings[q]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (N-df+0.5)/(df+0.5))
		for _, p := range ps {
			tf := float64(p.tf)
			norm := bm25K1 * (1 - bm25B + bm25B*float64(ix.length[p.doc])/ix.avg)
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += idf * tf * (bm25K1 + 1) / (tf + norm)
		}
	}
	// The best n, kept sorted by insertion: n is small, the touched entries
	// may be thousands, and a full sort of them would cost more than scoring.
	hits := make([]hit, 0, n+1)
	for _, d := range touched {
		h := hit{int(d), scores[d]}
		if len(hits) == n && !better(h, hits[n-1]) {
			continue
		}
		if keep != nil && !keep(h.doc) { // asked only of what would rank
			continue
		}
		i, _ := slices.BinarySearchFunc(hits, h, func(a, b hit) int {
			if better(a, b) {
				return -1
			}
			return 1
		})
		hits = slices.Insert(hits, i, h)
		if len(hits) > n {
			hits = hits[:n]
		}
	}
	return hits
}

// better ranks a before b: the higher score, and on a tie the newer entry
// (later in the file).
func better(a, b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc > b.doc
}
