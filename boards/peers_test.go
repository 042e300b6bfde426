package boards

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// A code is redeemed only by a proof over the two pins of the connection
// it comes on, once; a proof made over another server's pin (a machine in
// the middle relaying the code) is a wrong code, and wrong codes pause
// pairing, the right one too.
func TestRedeemIsBoundToThePinsAndUsedOnce(t *testing.T) {
	now := time.Date(2026, 11, 29, 1, 0, 0, 0, time.UTC)
	p, err := OpenPeers(memKV{}, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	code, _, err := p.Code()
	if err != nil {
		t.Fatal(err)
	}
	hall, garage, middle := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	// The hall saw the middle's certificate: its proof does not pass here.
	if _, err := p.Redeem(Proof(code, "a", hall, middle, "hall"), hall, garage, Peer{Name: "hall"}); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("a proof over another server's pin: %v", err)
	}
	// Nor one over another client's pin, nor for another name.
	if _, err := p.Redeem(Proof(code, "a", middle, garage, "hall"), hall, garage, Peer{Name: "hall"}); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("a proof over another client's pin: %v", err)
	}
	if _, err := p.Redeem(Proof(code, "a", hall, garage, "evil"), hall, garage, Peer{Name: "hall"}); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("a proof for another name: %v", err)
	}
	got, err := p.Redeem(Proof(code, "a", hall, garage, "hall"), hall, garage, Peer{Name: "hall"})
	if err != nil || got != code {
		t.Fatalf("the right proof: %q %v", got, err)
	}
	if peer, ok := p.ByPin(hall); !ok || peer.Name != "hall" {
		t.Fatalf("hall is not pinned: %+v", peer)
	}
	if _, err := p.Redeem(Proof(code, "a", middle, garage, "again"), middle, garage, Peer{Name: "again"}); !errors.Is(err, ErrWrongCode) {
		t.Fatalf("a code used twice: %v", err)
	}
	// Five wrong since the last pairing (the reused code, four more):
	// paused, the right code too.
	code2, _, _ := p.Code()
	for range 4 {
		p.Redeem(make([]byte, 32), middle, garage, Peer{Name: "x"})
	}
	var cd *CooldownError
	if _, err := p.Redeem(Proof(code2, "a", middle, garage, "x"), middle, garage, Peer{Name: "x"}); !errors.As(err, &cd) {
		t.Fatalf("the right code after five wrong ones: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := p.Redeem(Proof(code2, "a", middle, garage, "x"), middle, garage, Peer{Name: "x"}); err != nil {
		t.Fatalf("the right code after the pause: %v", err)
	}
}
