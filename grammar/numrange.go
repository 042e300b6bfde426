package grammar

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Numbers are written the plain way (no exponent), and the automaton admits
// only those inside the parameter's range, digit by digit. Without a bound an
// integer stays within 18 digits (int64) and a number within ±1e15 (exact in
// a float64); fractions have at most fracDigits digits beyond the bounds' own.
const (
	intLimit   = 999_999_999_999_999_999
	numLimit   = 1e15
	fracDigits = 6
)

// numberNode is the language of the numbers in [min, max] (nil: unbounded).
func numberNode(integer bool, min, max *float64) (node, error) {
	lo, hi := -numLimit, numLimit
	if integer {
		lo, hi = -intLimit, intLimit
	}
	if min != nil && *min > lo {
		lo = *min
	}
	if max != nil && *max < hi {
		hi = *max
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return nil, fmt.Errorf("the range is not a number")
	}
	if integer {
		lo, hi = math.Ceil(lo), math.Floor(hi)
	}
	if lo > hi {
		if integer {
			return nil, fmt.Errorf("no integer lies in %s", rangeText(min, max))
		}
		return nil, fmt.Errorf("the range %s is empty", rangeText(min, max))
	}
	var parts alt
	if hi >= 0 {
		parts = append(parts, nonNegative(decimalOf(math.Max(lo, 0)), decimalOf(hi), !integer))
	}
	if lo < 0 {
		// -x for x in [max(-hi, 0), -lo]; "-0" is harmless (it is 0).
		parts = append(parts, seq{lit("-"), nonNegative(decimalOf(math.Max(-hi, 0)), decimalOf(-lo), !integer)})
	}
	return parts, nil
}

func rangeText(min, max *float64) string {
	f := func(p *float64, inf string) string {
		if p == nil {
			return inf
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	return "[" + f(min, "-inf") + ", " + f(max, "+inf") + "]"
}

// decimal is a non-negative number as its integer digits and its fraction
// digits without trailing zeros.
type decimal struct{ ip, fp string }

func decimalOf(f float64) decimal {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	ip, fp, _ := strings.Cut(s, ".")
	return decimal{ip, strings.TrimRight(fp, "0")}
}

// nonNegative is the language of plain decimals in [lo, hi].
func nonNegative(lo, hi decimal, fractions bool) node {
	if !fractions { // integer bounds: fp is empty
		return intRange(lo.ip, hi.ip)
	}
	depth := max(fracDigits, len(lo.fp), len(hi.fp))
	frac := func(n node) node { return seq{lit("."), n} }
	if lo.ip == hi.ip {
		var parts alt
		if lo.fp == "" {
			parts = append(parts, empty)
		}
		parts = append(parts, frac(between(lo.fp, hi.fp, depth)))
		return seq{lit(lo.ip), parts}
	}
	var parts alt
	first := alt{frac(atLeast(lo.fp, depth))}
	if lo.fp == "" {
		first = append(first, empty)
	}
	parts = append(parts, seq{lit(lo.ip), first})
	if mid := intRangeBetween(lo.ip, hi.ip); mid != nil {
		parts = append(parts, seq{mid, opt(frac(rep{digit, 1, depth}))})
	}
	parts = append(parts, seq{lit(hi.ip), opt(frac(atMost(hi.fp, depth)))})
	return parts
}

// atLeast: non-empty digit strings s of at most n digits with 0.s ≥ 0.g.
func atLeast(g string, n int) node {
	if n == 0 {
		return nothing
	}
	g0, rest := head(g)
	return alt{
		seq{rangeOf(g0+1, '9'), rep{digit, 0, n - 1}},
		seq{lit(string(g0)), atLeastTail(rest, n-1)},
	}
}

func atLeastTail(g string, n int) node {
	if g == "" {
		return rep{digit, 0, n}
	}
	return atLeast(g, n)
}

// atMost: non-empty digit strings s of at most n digits with 0.s ≤ 0.h.
func atMost(h string, n int) node {
	if n == 0 {
		return nothing
	}
	h0, rest := head(h)
	return alt{
		seq{rangeOf('0', h0-1), rep{digit, 0, n - 1}},
		seq{lit(string(h0)), opt(atMost(rest, n-1))},
	}
}

// between: non-empty digit strings s of at most n digits with 0.g ≤ 0.s ≤ 0.h.
func between(g, h string, n int) node {
	if n == 0 {
		return nothing
	}
	if g == "" {
		return atMost(h, n)
	}
	g0, gr := head(g)
	h0, hr := head(h)
	if g0 == h0 {
		return seq{lit(string(g0)), between(gr, hr, n-1)}
	}
	return alt{
		seq{lit(string(g0)), atLeastTail(gr, n-1)},
		seq{rangeOf(g0+1, h0-1), rep{digit, 0, n - 1}},
		seq{lit(string(h0)), opt(atMost(hr, n-1))},
	}
}

func head(s string) (byte, string) {
	if s == "" {
		return '0', ""
	}
	return s[0], s[1:]
}

// intRange is the language of integers from lo to hi (decimal strings without
// leading zeros, lo ≤ hi).
func intRange(lo, hi string) node {
	var parts alt
	for n := len(lo); n <= len(hi); n++ {
		a, b := lo, hi
		if n > len(lo) {
			a = "1" + strings.Repeat("0", n-1)
		}
		if n < len(hi) {
			b = strings.Repeat("9", n)
		}
		parts = append(parts, sameLength(a, b))
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return parts
}

// intRangeBetween is intRange(lo+1, hi-1), or nil when that is empty.
func intRangeBetween(lo, hi string) node {
	a, _ := strconv.ParseUint(lo, 10, 64)
	b, _ := strconv.ParseUint(hi, 10, 64)
	if b < a+2 {
		return nil
	}
	return intRange(strconv.FormatUint(a+1, 10), strconv.FormatUint(b-1, 10))
}

// sameLength: digit strings of one length between a and b inclusive.
func sameLength(a, b string) node {
	if a == b {
		return lit(a)
	}
	if len(a) == 1 {
		return rangeOf(a[0], b[0])
	}
	rest := len(a) - 1
	if a[1:] == strings.Repeat("0", rest) && b[1:] == strings.Repeat("9", rest) {
		return seq{rangeOf(a[0], b[0]), rep{digit, rest, rest}}
	}
	if a[0] == b[0] {
		return seq{lit(a[:1]), sameLength(a[1:], b[1:])}
	}
	parts := alt{seq{lit(a[:1]), sameLength(a[1:], strings.Repeat("9", rest))}}
	if a[0]+1 < b[0] {
		parts = append(parts, seq{rangeOf(a[0]+1, b[0]-1), rep{digit, rest, rest}})
	}
	return append(parts, seq{lit(b[:1]), sameLength(strings.Repeat("0", rest), b[1:])})
}
