package daemon

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/store"
)

// cardSink is the boot partition as clawedge-init keeps it: the one code
// shown, or none.
type cardSink struct {
	mu      sync.Mutex
	code    string
	expires time.Time
	shows   int
}

func (c *cardSink) Show(code string, expires time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.code, c.expires = code, expires
	c.shows++
	return nil
}

func (c *cardSink) Clear() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.code = ""
	return nil
}

func (c *cardSink) get() (string, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.code, c.shows
}

// consoleBuffer is the console the loop writes while the test reads it.
type consoleBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (c *consoleBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.Write(p)
}

func (c *consoleBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10s", what)
		}
	}
}

func webCore(t *testing.T, dataDir string, sink PairingSink) *Core {
	t.Helper()
	cfg := config.Default()
	cfg.DataDir = dataDir
	cfg.Web = &config.Web{Listen: "127.0.0.1:0"}
	a, err := Open(cfg, Options{Version: "test", FirstPairing: sink})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// The first boot's pairing: with no browser paired, a code for an owner's
// web:phone is issued through web/pair as the console (audited without the
// code), shown on the console and handed to the card; a restart keeps the
// same code on the card (reading the card means powering off); the code
// redeemed, the card's copy is removed. With a browser paired already,
// nothing is issued and nothing is put on the card.
func TestFirstPairing(t *testing.T) {
	var clockMu sync.Mutex
	now := time.Now()
	webClock = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	defer func() { webClock = nil }()
	data := filepath.Join(t.TempDir(), "data")
	card := &cardSink{}
	a := webCore(t, data, card)
	var console consoleBuffer
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { a.firstPairing(ctx, card, &console, 10*time.Millisecond) })
	waitFor(t, "code on the card", func() bool { c, _ := card.get(); return c != "" })
	code, _ := card.get()
	if card.expires.Sub(now) < 23*time.Hour {
		t.Errorf("the first code expires at %v: too soon to read the card and come back", card.expires)
	}
	entries, err := a.store.TailBefore(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	var issued *store.AuditEntry
	for i, e := range entries {
		if strings.HasPrefix(e.Command, "@web/pair") {
			issued = &entries[i]
		}
		if strings.Contains(e.String(), code) {
			t.Errorf("the code is in the audit: %v", e)
		}
	}
	if issued == nil || issued.Who != "console" || !issued.OK {
		t.Fatalf("the code was not issued by web/pair as the console: %v", entries)
	}
	// Unused for a day: expired, and a new code replaces it on the card.
	clockMu.Lock()
	now = now.Add(24*time.Hour + time.Minute)
	clockMu.Unlock()
	waitFor(t, "a new code on the card", func() bool { c, _ := card.get(); return c != code })
	if _, _, _, err := a.webSessions.Redeem(code); err == nil {
		t.Fatal("the expired code still pairs")
	}
	code, _ = card.get()

	cancel()
	wg.Wait()
	a.Close()

	// A restart (the card was read meanwhile): the same code, still valid.
	card2 := &cardSink{}
	a = webCore(t, data, card2)
	ctx, cancel = context.WithCancel(context.Background())
	wg.Go(func() { a.firstPairing(ctx, card2, &console, 10*time.Millisecond) })
	waitFor(t, "the code after a restart", func() bool { c, _ := card2.get(); return c != "" })
	if c, _ := card2.get(); c != code {
		t.Fatalf("after a restart the card shows %q, not the code it had (%q)", c, code)
	}
	if !strings.Contains(console.String(), "code "+code) {
		t.Errorf("the console was not shown the code: %q", console.String())
	}
	if _, _, _, err := a.webSessions.Redeem(code); err != nil {
		t.Fatalf("the code from the card does not pair: %v", err)
	}
	waitFor(t, "the card cleared", func() bool { c, _ := card2.get(); return c == "" })
	wg.Wait() // it ends once a browser is paired
	cancel()
	a.Close()

	// Paired already: nothing issued, nothing on the card.
	card3 := &cardSink{}
	a = webCore(t, data, card3)
	defer a.Close()
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	wg.Go(func() { a.firstPairing(ctx, card3, &console, 10*time.Millisecond) })
	wg.Wait()
	if c, shows := card3.get(); c != "" || shows != 0 {
		t.Errorf("with a browser paired the card got %q (%d shows)", c, shows)
	}
}
