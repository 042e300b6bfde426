package remote

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Backoff is the delay before retry number n (from 1): base doubled with each
// retry, capped at max, with "equal jitter" (a random point in its upper half)
// so that boards that failed together do not retry together.
func Backoff(n int, base, max time.Duration) time.Duration {
	d := base
	for i := 1; i < n && d < max; i++ {
		d *= 2
	}
	if d > max {
		d = max
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2+1)
}

// RetryAfter reads the delay a 429 or 503 reply asks for: Retry-After in
// seconds or as an HTTP date, or retry-after-ms (sent by some OpenAI-style
// APIs). ok is false when the reply names none.
func RetryAfter(get func(string) string, now time.Time) (d time.Duration, ok bool) {
	if v := strings.TrimSpace(get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e9 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(get("retry-after"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s < 0 || s > 1e6 {
			return 0, false
		}
		return time.Duration(s * float64(time.Second)), true
	}
	// The three date forms HTTP allows (RFC 9110, section 5.6.7).
	for _, layout := range []string{time.RFC1123, time.RFC850, time.ANSIC} {
		if t, err := time.Parse(layout, v); err == nil {
			if d := t.Sub(now); d > 0 {
				return d, true
			}
			return 0, true
		}
	}
	return 0, false
}
