package telegram

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
)

type sent struct {
	chat int64
	text string
}

type fakeSender struct {
	mu   sync.Mutex
	msgs []sent
	ch   chan struct{}
}

func (f *fakeSender) Notify(ctx context.Context, chat int64, text string) error {
	f.mu.Lock()
	f.msgs = append(f.msgs, sent{chat, text})
	f.mu.Unlock()
	f.ch <- struct{}{}
	return nil
}

// Pin edges on the simulated board notify users, through the real channel and the fake
// Bot API; bounces within the minimum interval are not sent.
func TestPinEdgeNotifies(t *testing.T) {
	h := newHarness(t, nil, "")
	ch := h.start(h.config())
	pin, err := h.board.Pin("button")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 21, 14, 2, 0, 0, time.Local)
	var mu sync.Mutex
	var waits atomic.Int32 // how many times the notifier has started waiting
	n := &Notifier{
		Sender: ch,
		Events: []Event{{
			Name: "button",
			Wait: func(ctx context.Context) (bool, error) {
				waits.Add(1)
				l, err := pin.WaitForEdge(ctx, hal.EdgeFalling)
				return l == hal.High, err
			},
			Users: []int64{owner.ID, friend.ID},
			Text:  "button pressed",
		}},
		MinInterval: time.Minute,
		Now:         func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	// press waits until the notifier has handled every earlier press and is
	// blocked in its nth wait, so that no step races the one before it.
	untilWaiting := func(nth int32) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); waits.Load() < nth || h.sim.Waiters(27) == 0; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the notifier did not reach wait %d (at %d, %d waiters on GPIO27): an edge was not delivered", nth, waits.Load(), h.sim.Waiters(27))
			}
		}
	}
	// A press made in the moment between two waits is lost, as it would be
	// on a board (CI saw one: the notifier stuck in its second wait, the
	// press before it): pressing again until the notifier has moved past
	// its nth wait is what a person does, and within MinInterval a second
	// press is a bounce, dropped, so the notifications counted below hold.
	press := func(nth int32) {
		untilWaiting(nth)
		for deadline := time.Now().Add(10 * time.Second); ; {
			h.sim.Drive(27, hal.Low)
			h.sim.Drive(27, hal.High)
			moved := time.Now().Add(500 * time.Millisecond)
			for waits.Load() <= nth && time.Now().Before(moved) {
				time.Sleep(time.Millisecond)
			}
			if waits.Load() > nth || time.Now().After(deadline) {
				return
			}
		}
	}
	press(1)
	for _, u := range []int64{owner.ID, friend.ID} {
		if got := h.reply(u, 1); got != "button pressed at 14:02" {
			t.Errorf("notification to %d = %q", u, got)
		}
	}
	press(2)        // a bounce within the interval: dropped
	untilWaiting(3) // the bounce is handled before the clock moves on
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	press(3)
	if got := h.reply(owner.ID, 2); got != "button pressed at 14:04" {
		t.Errorf("second notification = %q", got)
	}
	if n := len(h.srv.Sent(owner.ID)); n != 2 {
		t.Errorf("%d notifications, want 2 (the bounce is dropped)", n)
	}
}

func TestNotifierDefaultTextAndErrors(t *testing.T) {
	f := &fakeSender{ch: make(chan struct{}, 4)}
	edges := make(chan bool)
	calls := 0
	n := &Notifier{Sender: f, MinInterval: time.Nanosecond, Events: []Event{{
		Name: "door",
		Wait: func(ctx context.Context) (bool, error) {
			calls++
			if calls == 1 {
				return false, context.DeadlineExceeded // a failing wait is retried
			}
			select {
			case v := <-edges:
				return v, nil
			case <-ctx.Done():
				return false, ctx.Err()
			}
		},
		Users: []int64{7},
	}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { n.Run(ctx); close(done) }()
	edges <- true
	<-f.ch
	edges <- false
	<-f.ch
	cancel()
	<-done
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.msgs) != 2 || f.msgs[0].chat != 7 || f.msgs[0].text[:11] != "door rising" || f.msgs[1].text[:12] != "door falling" {
		t.Errorf("messages = %+v", f.msgs)
	}
}
