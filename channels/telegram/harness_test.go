package telegram

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/tools/sys"
)

// People of the tests.
var (
	owner    = telegramtest.User{ID: 42, FirstName: "Olga", Username: "olga"}
	friend   = telegramtest.User{ID: 43, FirstName: "Fred"} // allowed, not an owner in some tests
	stranger = telegramtest.User{ID: 666, FirstName: "Mallory", Username: "mallory"}
	group    = telegramtest.Chat{ID: -1001, Type: "supergroup", Title: "home"}
)

const gpioLED = 17

// syncBuffer collects the log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	t      testing.TB
	srv    *telegramtest.Server
	dir    string
	st     *store.Store
	sim    *sim.Sim
	board  *hal.Board
	disp   *channels.Dispatcher
	ch     *Channel
	log    *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

type option func(*Config, *harness)

func withAgent(a channels.Agent) option {
	return func(_ *Config, h *harness) { h.disp.Agent = a }
}

// newHarness opens a store and a simulated board, and a dispatcher like the daemon's.
func newHarness(t testing.TB, srv *telegramtest.Server, dir string) *harness {
	t.Helper()
	if srv == nil {
		srv = telegramtest.New(t)
	}
	if dir == "" {
		dir = t.TempDir()
	}
	h := &harness{t: t, srv: srv, dir: dir, log: &syncBuffer{}}
	var err error
	if h.st, err = store.Open(dir, store.Options{}); err != nil {
		t.Fatal(err)
	}
	h.sim = sim.New()
	h.board, err = hal.Open(h.sim, hal.Config{Pins: []hal.PinConfig{
		{Name: "led", GPIO: gpioLED, Mode: hal.ModeOut},
		{Name: "button", GPIO: 27, Mode: hal.ModeIn, Pull: hal.PullUp, Edge: hal.EdgeBoth},
	}})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	if err := peripherals.Register(reg, h.board); err != nil {
		t.Fatal(err)
	}
	if err := sys.Register(reg, sys.Info{Version: "test", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	h.disp = &channels.Dispatcher{Runner: &tools.Runner{Registry: reg, Audit: h.st},
		Elevation: &policy.Policy{Owners: []string{"telegram:42"}, Elevation: &policy.Elevation{}}}
	t.Cleanup(func() {
		h.stop()
		h.board.Close()
		h.st.Close()
	})
	return h
}

func (h *harness) config(opts ...option) Config {
	cfg := Config{
		Client:      NewClient(h.srv.URL, h.srv.Token, ClientOptions{}),
		Store:       h.st,
		Dispatcher:  h.disp,
		AllowUsers:  []int64{owner.ID},
		Log:         slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		PollTimeout: time.Second,
		MinBackoff:  10 * time.Millisecond,
		MaxBackoff:  100 * time.Millisecond,
	}
	for _, o := range opts {
		o(&cfg, h)
	}
	return cfg
}

// start runs a channel with cfg until the test ends or stop.
func (h *harness) start(cfg Config) *Channel {
	h.t.Helper()
	ch, err := New(cfg)
	if err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.ch, h.cancel, h.done = ch, cancel, make(chan error, 1)
	go func() { h.done <- ch.Run(ctx) }()
	return ch
}

func (h *harness) stop() error {
	if h.cancel == nil {
		return nil
	}
	h.cancel()
	h.cancel = nil
	select {
	case err := <-h.done:
		return err
	case <-time.After(10 * time.Second):
		h.t.Fatal("channel did not stop")
	}
	return nil
}

// reply waits until chat has n successful replies and returns the last.
func (h *harness) reply(chat int64, n int) string {
	h.t.Helper()
	var got []string
	h.srv.Wait(h.t, 10*time.Second, "a reply", func() bool {
		got = h.srv.Sent(chat)
		return len(got) >= n
	})
	return got[n-1]
}

// drained waits until the server has no unconfirmed update and the inbox is empty.
func (h *harness) drained() {
	h.t.Helper()
	h.srv.Wait(h.t, 10*time.Second, "all updates confirmed and handled", func() bool {
		items, _ := h.st.QueueItems(QueueName, 0)
		return h.srv.Pending() == 0 && len(items) == 0
	})
}

// plainOf parses a sent MarkdownV2 text back to what the user sees.
func plainOf(t testing.TB, md string) string {
	t.Helper()
	p, err := telegramtest.ParseMarkdownV2(md)
	if err != nil {
		t.Fatalf("sent MarkdownV2 does not parse: %v\n%s", err, md)
	}
	return p
}

func audit(t testing.TB, st *store.Store) []store.AuditEntry {
	t.Helper()
	e, err := st.AuditSince(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// agentFunc is a scripted agent.
type agentFunc func(ctx context.Context, msg channels.Message) (string, error)

func (f agentFunc) Reply(ctx context.Context, msg channels.Message) (string, error) {
	return f(ctx, msg)
}

func contains(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}
