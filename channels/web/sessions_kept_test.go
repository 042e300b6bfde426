package web

import (
	"errors"
	"testing"
	"time"
)

// A code issued for longer than CodeTTL (the SD image's first code) is kept
// in the store: a reopened door still takes it, once; an expired one is
// gone after a reopen too; an ordinary code is not kept; a day is the most.
func TestKeptCodes(t *testing.T) {
	d := newDash(t, nil)
	long, exp, err := d.srv.Sessions.PairFor("phone", Owner, 24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	short, _, _ := d.srv.Sessions.Pair("tablet", Operator)
	if _, _, err := d.srv.Sessions.PairFor("x", Owner, MaxCodeTTL+time.Minute); err == nil {
		t.Error("a code for more than a day")
	}
	again, err := OpenSessions(d.st, d.now)
	if err != nil {
		t.Fatal(err)
	}
	if c, role, e, ok := again.Kept("phone"); !ok || c != long || role != Owner || !e.Equal(exp.UTC()) {
		t.Fatalf("kept after reopening: %q %v %v %v", c, role, e, ok)
	}
	if _, _, _, err := again.Redeem(short); !errors.Is(err, ErrWrongCode) {
		t.Errorf("a short code survived the reopen: %v", err)
	}
	if _, _, dev, err := again.Redeem(long); err != nil || dev.Name != "phone" || dev.Role != Owner {
		t.Fatalf("the kept code: %+v %v", dev, err)
	}
	third, _ := OpenSessions(d.st, d.now)
	if _, _, _, ok := third.Kept("phone"); ok {
		t.Error("a used code is still kept")
	}
	if _, _, _, err := third.Redeem(long); !errors.Is(err, ErrWrongCode) {
		t.Errorf("a used code pairs again: %v", err)
	}
	// Expiry, across a reopen.
	late, _, _ := third.PairFor("laptop", Owner, time.Hour)
	d.advance(time.Hour)
	fourth, _ := OpenSessions(d.st, d.now)
	if _, _, _, ok := fourth.Kept("laptop"); ok {
		t.Error("an expired code is kept")
	}
	if _, _, _, err := fourth.Redeem(late); !errors.Is(err, ErrWrongCode) {
		t.Errorf("an expired code pairs: %v", err)
	}
}
