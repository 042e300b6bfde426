package sampling

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

type allow map[int32]bool

func (a allow) Allowed(t int32) bool { return a[t] }

func TestGreedy(t *testing.T) {
	s, _ := New(Params{})
	got, err := s.Sample([]float32{0.1, 3, -1, 2.9}, nil)
	if err != nil || got != 1 {
		t.Errorf("greedy = %d, %v; want 1", got, err)
	}
	// The mask wins over likelihood: the best allowed token, never a forbidden one.
	got, _ = s.Sample([]float32{0.1, 3, -1, 2.9}, allow{0: true, 2: true})
	if got != 0 {
		t.Errorf("masked greedy = %d, want 0", got)
	}
	if _, err := s.Sample([]float32{1, 2}, allow{}); !errors.Is(err, ErrNoToken) {
		t.Errorf("all masked: %v", err)
	}
	if _, err := s.Sample([]float32{float32(math.NaN()), float32(math.Inf(-1))}, nil); !errors.Is(err, ErrNoToken) {
		t.Errorf("no finite logit: %v", err)
	}
}

// listMask allows a sorted list of tokens and counts the Allowed calls, which
// a sampler that uses the list never makes.
type listMask struct {
	ids   []int32
	calls *int
}

func (m listMask) Allowed(t int32) bool {
	*m.calls++
	_, ok := slices.BinarySearch(m.ids, t)
	return ok
}
func (m listMask) AllowedTokens() []int32 {
	if m.ids == nil {
		return []int32{}
	}
	return m.ids
}

// bitMask is the same set as a bitset.
type bitMask struct {
	bits  []uint64
	calls *int
}

func (m bitMask) Allowed(t int32) bool {
	*m.calls++
	return int(t>>6) < len(m.bits) && m.bits[t>>6]&(1<<(t&63)) != 0
}
func (m bitMask) AllowedBits() []uint64 { return m.bits }

// plainMask hides the listing methods.
type plainMask struct{ Mask }

func TestListedMasksSampleAsPlainMasks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 3000
	for round := range 40 {
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(rng.NormFloat64() * 3)
			if rng.IntN(50) == 0 {
				logits[i] = float32(math.Inf(-1))
			}
			if rng.IntN(7) == 0 { // ties
				logits[i] = 2
			}
		}
		var ids []int32
		bits := make([]uint64, (n+63)/64)
		density := []int{2, 20, 200, n}[round%4]
		for i := range int32(n) {
			if rng.IntN(n) < density {
				ids = append(ids, i)
				bits[i>>6] |= 1 << (i & 63)
			}
		}
		params := []Params{{}, {Temperature: 0.8, Seed: 3}, {Temperature: 1, TopK: 5, TopP: 0.9, MinP: 0.05, Seed: 4}, {RepeatPenalty: 1.3, Seed: 5}}[round%4]
		calls := 0
		masks := []Mask{listMask{ids, &calls}, bitMask{bits, &calls}, plainMask{listMask{ids, new(int)}}}
		var got [3][]int32
		var errs [3]error
		for k, m := range masks {
			s, _ := New(params)
			s.Accept(ids[:min(3, len(ids))]...)
			for range 20 {
				id, err := s.Sample(logits, m)
				if err != nil {
					errs[k] = err
					break
				}
				if !m.Allowed(id) {
					t.Fatalf("round %d mask %d: sampled forbidden %d", round, k, id)
				}
				got[k] = append(got[k], id)
			}
		}
		if !slices.Equal(got[0], got[2]) || !slices.Equal(got[1], got[2]) || errs[0] != errs[2] || errs[1] != errs[2] {
			t.Errorf("round %d: list %v %v, bits %v %v, plain %v %v", round, got[0], errs[0], got[1], errs[1], got[2], errs[2])
		}
		if calls != 2*len(got[0]) { // only the test's own checks above
			t.Errorf("round %d: the sampler called Allowed %d times instead of using the listing", round, calls-2*len(got[0]))
		}
	}
}

func TestListedMaskEdges(t *testing.T) {
	calls := 0
	s, _ := New(Params{})
	// Tokens beyond the logits are ignored, not read.
	if got, err := s.Sample([]float32{1, 2}, listMask{[]int32{0, 5}, &calls}); err != nil || got != 0 {
		t.Errorf("list with an id beyond the logits: %d, %v", got, err)
	}
	if _, err := s.Sample([]float32{1, 2}, listMask{nil, &calls}); !errors.Is(err, ErrNoToken) {
		t.Errorf("empty list: %v", err)
	}
	if _, err := s.Sample([]float32{float32(math.NaN()), 2}, listMask{[]int32{0}, &calls}); !errors.Is(err, ErrNoToken) {
		t.Errorf("only a NaN allowed: %v", err)
	}
	s2, _ := New(Params{Temperature: 1})
	if _, err := s2.Sample([]float32{1, 2}, bitMask{[]uint64{0}, &calls}); !errors.Is(err, ErrNoToken) {
		t.Errorf("empty bitset: %v", err)
	}
}

func TestSeedDeterminism(t *testing.T) {
	logits := make([]float32, 1000)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i)))
	}
	draw := func(seed uint64) []int32 {
		s, _ := New(Params{Temperature: 1, Seed: seed})
		out := make([]int32, 50)
		for i := range out {
			out[i], _ = s.Sample(logits, nil)
		}
		return out
	}
	a, b, c := draw(7), draw(7), draw(8)
	same, diff := true, false
	for i := range a {
		same = same && a[i] == b[i]
		diff = diff || a[i] != c[i]
	}
	if !same || !diff {
		t.Errorf("same seed same tokens: %v; other seed other tokens: %v", same, diff)
	}
}

func TestTruncations(t *testing.T) {
	logits := []float32{5, 4, 3, 2, 1, 0}
	counts := func(p Params) map[int32]int {
		p.Seed = 1
		s, _ := New(p)
		c := map[int32]int{}
		for range 4000 {
			id, err := s.Sample(logits, nil)
			if err != nil {
				t.Fatal(err)
			}
			c[id]++
		}
		return c
	}
	if c := counts(Params{Temperature: 1, TopK: 2}); len(c) != 2 || c[0] == 0 || c[1] == 0 {
		t.Errorf("top_k 2 drew %v", c)
	}
	// p(0)≈0.636, p(1)≈0.234: top_p 0.8 keeps exactly {0,1}.
	if c := counts(Params{Temperature: 1, TopP: 0.8}); len(c) != 2 {
		t.Errorf("top_p 0.8 drew %v", c)
	}
	// min_p 0.3: p(1)/p(0)≈0.37 stays, p(2)/p(0)≈0.135 goes.
	if c := counts(Params{Temperature: 1, MinP: 0.3}); len(c) != 2 {
		t.Errorf("min_p 0.3 drew %v", c)
	}
	// A high temperature flattens: every token appears.
	if c := counts(Params{Temperature: 50}); len(c) != 6 {
		t.Errorf("temperature 50 drew %v", c)
	}
	// Frequencies follow the softmax at temperature 1 (p(0) ≈ 0.636).
	if c := counts(Params{Temperature: 1}); math.Abs(float64(c[0])/4000-0.636) > 0.03 {
		t.Errorf("token 0 drawn %d/4000, want ≈ 0.636", c[0])
	}
}

func TestRepeatPenalty(t *testing.T) {
	s, _ := New(Params{RepeatPenalty: 2})
	s.Accept(0)
	// 5/2 = 2.5 < 4: the repeated token loses its lead.
	if got, _ := s.Sample([]float32{5, 4}, nil); got != 1 {
		t.Errorf("with penalty = %d, want 1", got)
	}
	// Negative logits get worse, not better.
	s2, _ := New(Params{RepeatPenalty: 2})
	s2.Accept(1)
	if got, _ := s2.Sample([]float32{-3, -2}, nil); got != 0 {
		t.Errorf("negative logit penalised = %d, want 0 (-2*2 = -4 < -3)", got)
	}
	// Only the last RepeatLastN tokens count.
	s3, _ := New(Params{RepeatPenalty: 2, RepeatLastN: 1})
	s3.Accept(0, 1)
	if got, _ := s3.Sample([]float32{5, 4.5}, nil); got != 0 {
		t.Errorf("token 0 is outside the window: got %d", got)
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Params{{Temperature: float32(math.NaN())}, {TopK: -1}, {TopP: 1.5}, {MinP: -0.1}, {RepeatPenalty: 11}, {RepeatLastN: -2}} {
		if _, err := New(p); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}

func BenchmarkSampleQwenVocab(b *testing.B) {
	logits := make([]float32, 151936)
	for i := range logits {
		logits[i] = float32(math.Sin(float64(i) * 0.37))
	}
	for _, p := range []struct {
		name string
		p    Params
	}{{"greedy", Params{}}, {"top_k40_top_p0.9", Params{Temperature: 0.7, TopK: 40, TopP: 0.9}}, {"full_softmax", Params{Temperature: 0.7}}} {
		b.Run(p.name, func(b *testing.B) {
			s, _ := New(p.p)
			b.ReportAllocs()
			for b.Loop() {
				s.Sample(logits, nil)
			}
		})
	}
	// A constraint step: 40 allowed tokens, as a list and as a plain mask.
	ids := make([]int32, 40)
	for i := range ids {
		ids[i] = int32(i * 3000)
	}
	calls := 0
	for _, m := range []struct {
		name string
		m    Mask
	}{{"greedy_list40", listMask{ids, &calls}}, {"greedy_plain40", plainMask{listMask{ids, &calls}}}} {
		b.Run(m.name, func(b *testing.B) {
			s, _ := New(Params{})
			for b.Loop() {
				s.Sample(logits, m.m)
			}
		})
	}
}
