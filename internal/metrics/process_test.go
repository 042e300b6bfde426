package metrics

import (
	"bytes"
	"regexp"
	"testing"
	"time"
)

// TestOpenFDsCountedOncePerTTL checks that a burst of scrapes counts the open
// descriptors once, and that the count is taken again after its time.
func TestOpenFDsCountedOncePerTTL(t *testing.T) {
	calls := 0
	c := &fdCache{ttl: 50 * time.Millisecond, count: func() (int, error) { calls++; return 40 + calls, nil }}
	for range 100 {
		if n, err := c.get(); n != 41 || err != nil {
			t.Fatalf("get() = %d, %v; want the first count, 41", n, err)
		}
	}
	if calls != 1 {
		t.Fatalf("100 gets within the ttl counted %d times, want 1", calls)
	}
	time.Sleep(60 * time.Millisecond)
	if n, _ := c.get(); n != 42 || calls != 2 {
		t.Errorf("after the ttl: get() = %d after %d counts, want 42 after 2", n, calls)
	}
}

// TestProcessOpenFDs checks that the page has the open descriptors.
func TestProcessOpenFDs(t *testing.T) {
	var b bytes.Buffer
	writeProcessMetrics(&b)
	if !regexp.MustCompile(`(?m)^process_open_fds [1-9][0-9]*$`).Match(b.Bytes()) {
		t.Errorf("no process_open_fds in\n%s", b.String())
	}
}
