package hal_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/hal/simtest"
)

// The GPIO numbers of the test board.
const (
	gpioLED    = 17
	gpioRelay  = 22
	gpioButton = 27
	gpioLoop   = 5 // an input wired from the LED in some tests
)

func testConfig() hal.Config {
	return hal.Config{
		Pins: []hal.PinConfig{
			{Name: "led", GPIO: gpioLED, Mode: hal.ModeOut},
			{Name: "relay", GPIO: gpioRelay, Mode: hal.ModeOut, ActiveLow: true},
			{Name: "button", GPIO: gpioButton, Mode: hal.ModeIn, Pull: hal.PullUp, Edge: hal.EdgeBoth},
		},
		Ports: []hal.PortConfig{{Name: "arduino", Device: "/dev/ttyFAKE0", Baud: 115200}},
	}
}

func open(t testing.TB, s *sim.Sim, cfg hal.Config) *hal.Board {
	t.Helper()
	b, err := hal.Open(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func pin(t testing.TB, b *hal.Board, name string) *hal.Pin {
	t.Helper()
	p, err := b.Pin(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLevelAndParse(t *testing.T) {
	if hal.High.String() != "high" || hal.Low.String() != "low" {
		t.Fatal(hal.High, hal.Low)
	}
	for in, want := range map[string]hal.Level{"high": hal.High, "ON": hal.High, "1": hal.High, "true": hal.High, "low": hal.Low, "off": hal.Low, "0": hal.Low} {
		if got, err := hal.ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := hal.ParseLevel("maybe"); err == nil || !strings.Contains(err.Error(), `"maybe"`) {
		t.Errorf("ParseLevel(maybe) error = %v", err)
	}
}

func TestOpenConfiguresPins(t *testing.T) {
	s := sim.New()
	cfg := testConfig()
	cfg.Pins[0].Initial = hal.High
	b := open(t, s, cfg)
	if b.Driver() != "sim" {
		t.Errorf("Driver() = %q", b.Driver())
	}
	if s.Level(gpioLED) != hal.High {
		t.Error("led not driven to its Initial level")
	}
	// The relay is active-low and initially off: electrically high.
	if s.Level(gpioRelay) != hal.High {
		t.Error("active-low relay initially off should be electrically high")
	}
	// The button has a pull-up and nothing drives it.
	if s.Level(gpioButton) != hal.High {
		t.Error("button pull-up not applied")
	}
	var names []string
	for _, p := range b.Pins() {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, ","); got != "button,led,relay" {
		t.Errorf("Pins() = %s, want sorted", got)
	}
	if got := pin(t, b, "led").String(); got != "led (GPIO17, out, high)" {
		t.Errorf("String() = %q", got)
	}
	if got := b.String(); got != "sim board: 3 pins, 1 port, 0 buses" {
		t.Errorf("Board.String() = %q", got)
	}
}

func TestActiveLow(t *testing.T) {
	s := sim.New()
	cfg := testConfig()
	cfg.Pins = append(cfg.Pins, hal.PinConfig{Name: "door", GPIO: 6, Mode: hal.ModeIn, Pull: hal.PullUp, ActiveLow: true, Edge: hal.EdgeRising})
	b := open(t, s, cfg)
	relay := pin(t, b, "relay")
	if err := relay.Write(hal.High); err != nil {
		t.Fatal(err)
	}
	if s.Level(gpioRelay) != hal.Low {
		t.Error("relay on should be electrically low")
	}
	if l, _ := relay.Read(); l != hal.High {
		t.Error("relay reads back logical high")
	}
	if err := relay.Write(hal.Low); err != nil {
		t.Fatal(err)
	}
	if s.Level(gpioRelay) != hal.High {
		t.Error("relay off should be electrically high")
	}

	door := pin(t, b, "door")
	if l, _ := door.Read(); l != hal.Low {
		t.Error("active-low input pulled up should read logical low")
	}
	// Logical rising on an active-low input is an electrical falling edge.
	got := waitAsync(t, s, 6, func(ctx context.Context) (hal.Level, error) { return door.WaitForEdge(ctx, hal.EdgeRising) })
	s.Drive(6, hal.Low)
	if r := <-got; r.err != nil || r.level != hal.High {
		t.Fatalf("WaitForEdge(rising) = %v, %v", r.level, r.err)
	}
	if l, _ := door.Read(); l != hal.High {
		t.Error("active-low input driven low should read logical high")
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		pins []hal.PinConfig
		port []hal.PortConfig
		want string
	}{
		{"bad mode", []hal.PinConfig{{Name: "x", GPIO: 4, Mode: "sideways"}}, nil, `pin "x" (GPIO4): mode "sideways": want in or out`},
		{"dup name", []hal.PinConfig{{Name: "x", GPIO: 4, Mode: hal.ModeIn}, {Name: "x", GPIO: 5, Mode: hal.ModeIn}}, nil, `pin "x" (GPIO5): configured twice`},
		{"dup gpio", []hal.PinConfig{{Name: "a", GPIO: 4, Mode: hal.ModeIn}, {Name: "b", GPIO: 4, Mode: hal.ModeIn}}, nil, `pin "b" (GPIO4): GPIO4 is already used by pin "a"`},
		{"pull on output", []hal.PinConfig{{Name: "x", GPIO: 4, Mode: hal.ModeOut, Pull: hal.PullUp}}, nil, `pin "x" (GPIO4): pull is only for inputs`},
		{"edge on output", []hal.PinConfig{{Name: "x", GPIO: 4, Mode: hal.ModeOut, Edge: hal.EdgeBoth}}, nil, `pin "x" (GPIO4): edge is only for inputs`},
		{"max_on on input", []hal.PinConfig{{Name: "x", GPIO: 4, Mode: hal.ModeIn, MaxOn: time.Second}}, nil, `pin "x" (GPIO4): max_on is only for outputs`},
		{"bad pull", []hal.PinConfig{{Name: "x", GPIO: 4, Mode: hal.ModeIn, Pull: "sideways"}}, nil, `pin "x" (GPIO4): pull "sideways": want none, up or down`},
		{"no gpio on sim", []hal.PinConfig{{Name: "x", GPIO: 40, Mode: hal.ModeOut}}, nil, `pin "x" (GPIO40): sim: GPIO40 does not exist`},
		{"empty name", []hal.PinConfig{{GPIO: 4, Mode: hal.ModeIn}}, nil, `pin "" (GPIO4): the name is empty`},
		{"bad baud", nil, []hal.PortConfig{{Name: "p", Device: "/dev/ttyX", Baud: 0}}, `port "p" (/dev/ttyX): baud 0 must be positive`},
		{"dup device", nil, []hal.PortConfig{{Name: "p", Device: "/dev/ttyX", Baud: 9600}, {Name: "q", Device: "/dev/ttyX", Baud: 9600}}, `port "q" (/dev/ttyX): device already used by port "p"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := hal.Open(sim.New(), hal.Config{Pins: tc.pins, Ports: tc.port})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v\nwant it to contain %s", err, tc.want)
			}
		})
	}
}

func TestOpenFailureDrivesSafeAndClosesDriver(t *testing.T) {
	s := sim.New()
	_, err := hal.Open(s, hal.Config{Pins: []hal.PinConfig{
		{Name: "a", GPIO: 4, Mode: hal.ModeOut, Initial: hal.High, Safe: hal.Low},
		{Name: "b", GPIO: 99, Mode: hal.ModeOut},
	}})
	if err == nil {
		t.Fatal("Open succeeded with GPIO99 on the sim")
	}
	if s.Level(4) != hal.Low {
		t.Error("pin a configured before the failure was not returned to Safe")
	}
	if _, err := s.Line(4); err == nil {
		t.Error("driver not closed after a failed Open")
	}
}

func TestUnknownNames(t *testing.T) {
	b := open(t, sim.New(), testConfig())
	if _, err := b.Pin("x"); err == nil || err.Error() != `unknown pin "x" (configured: button, led, relay)` {
		t.Errorf("Pin(x) error = %v", err)
	}
	if _, err := b.Port("usb"); err == nil || err.Error() != `unknown port "usb" (configured: arduino)` {
		t.Errorf("Port(usb) error = %v", err)
	}
	if _, err := b.Bus("i2c"); err == nil || err.Error() != `unknown bus "i2c" (no buses configured)` {
		t.Errorf("Bus(i2c) error = %v", err)
	}
}

func TestWriteToggleAndInputErrors(t *testing.T) {
	s := sim.New()
	b := open(t, s, testConfig())
	led, button := pin(t, b, "led"), pin(t, b, "button")
	if err := led.Write(hal.High); err != nil || s.Level(gpioLED) != hal.High {
		t.Fatalf("Write(high): %v, level %v", err, s.Level(gpioLED))
	}
	if l, err := led.Toggle(); err != nil || l != hal.Low || s.Level(gpioLED) != hal.Low {
		t.Fatalf("Toggle() = %v, %v; level %v", l, err, s.Level(gpioLED))
	}
	if err := button.Write(hal.High); err == nil || err.Error() != `pin "button" is an input; only outputs can be written` {
		t.Errorf("Write on input: %v", err)
	}
	if _, err := button.Toggle(); err == nil {
		t.Error("Toggle on input succeeded")
	}
	if err := button.Pulse(context.Background(), time.Millisecond); err == nil {
		t.Error("Pulse on input succeeded")
	}
	if _, err := led.WaitForEdge(context.Background(), hal.EdgeBoth); err == nil || !strings.Contains(err.Error(), "only inputs can be waited on") {
		t.Errorf("WaitForEdge on output: %v", err)
	}
}

func TestMaxOn(t *testing.T) {
	s := sim.New()
	cfg := testConfig()
	cfg.Pins[1].MaxOn = 30 * time.Millisecond // relay, active-low
	b := open(t, s, cfg)
	relay := pin(t, b, "relay")
	if err := relay.Write(hal.High); err != nil {
		t.Fatal(err)
	}
	if s.Level(gpioRelay) != hal.Low {
		t.Fatal("relay not on")
	}
	eventually(t, func() bool { return s.Level(gpioRelay) == hal.High })
	if l, _ := relay.Read(); l != hal.Low {
		t.Error("relay reads on after max_on")
	}

	// Low cancels the timer: a later High is not cut short by the old one.
	if err := relay.Write(hal.High); err != nil {
		t.Fatal(err)
	}
	relay.Write(hal.Low)
	edges := s.Edges(gpioRelay)
	time.Sleep(60 * time.Millisecond)
	if s.Edges(gpioRelay) != edges {
		t.Error("a cancelled max_on timer still wrote the pin")
	}
}

func TestMaxOnRearm(t *testing.T) {
	s := sim.New()
	cfg := testConfig()
	cfg.Pins[0].MaxOn = 300 * time.Millisecond
	b := open(t, s, cfg)
	led := pin(t, b, "led")
	led.Write(hal.High)
	time.Sleep(200 * time.Millisecond)
	led.Write(hal.High) // re-arms: off at about 500 ms, not 300
	time.Sleep(200 * time.Millisecond)
	if s.Level(gpioLED) != hal.High {
		t.Fatal("max_on was not re-armed by the second High write")
	}
	eventually(t, func() bool { return s.Level(gpioLED) == hal.Low })
}

func TestPulse(t *testing.T) {
	s := sim.New()
	b := open(t, s, testConfig())
	led := pin(t, b, "led")
	before := s.Edges(gpioLED)
	if err := led.Pulse(context.Background(), 10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if s.Level(gpioLED) != hal.Low || s.Edges(gpioLED)-before != 2 {
		t.Fatalf("after a pulse: level %v, %d edges", s.Level(gpioLED), s.Edges(gpioLED)-before)
	}

	// Cancelling restores at once.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start := time.Now()
	err := led.Pulse(ctx, time.Minute)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled pulse: %v after %v", err, time.Since(start))
	}
	if s.Level(gpioLED) != hal.Low {
		t.Error("cancelled pulse did not restore")
	}

	// A write during the pulse wins.
	done := make(chan error)
	go func() { done <- led.Pulse(context.Background(), 100*time.Millisecond) }()
	eventually(t, func() bool { return s.Level(gpioLED) == hal.High })
	led.Write(hal.High)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s.Level(gpioLED) != hal.High {
		t.Error("pulse restored over a later write")
	}
}

type waitResult struct {
	level hal.Level
	err   error
}

// waitAsync starts wait and returns once it is blocked on gpio in the sim.
func waitAsync(t *testing.T, s *sim.Sim, gpio int, wait func(context.Context) (hal.Level, error)) <-chan waitResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	n := s.Waiters(gpio)
	ch := make(chan waitResult, 1)
	go func() {
		defer cancel()
		l, err := wait(ctx)
		ch <- waitResult{l, err}
	}()
	eventually(t, func() bool { return s.Waiters(gpio) > n })
	return ch
}

func TestWaitForEdge(t *testing.T) {
	s := sim.New()
	b := open(t, s, testConfig())
	button := pin(t, b, "button")

	got := waitAsync(t, s, gpioButton, func(ctx context.Context) (hal.Level, error) { return button.WaitForEdge(ctx, hal.EdgeFalling) })
	s.Drive(gpioButton, hal.Low)
	if r := <-got; r.err != nil || r.level != hal.Low {
		t.Fatalf("falling: %v, %v", r.level, r.err)
	}

	// The pin detects both; asking for rising ignores a falling edge.
	s.Drive(gpioButton, hal.High)
	got = waitAsync(t, s, gpioButton, func(ctx context.Context) (hal.Level, error) { return button.WaitForEdge(ctx, hal.EdgeRising) })
	s.Drive(gpioButton, hal.Low)
	time.Sleep(10 * time.Millisecond)
	select {
	case r := <-got:
		t.Fatalf("rising wait returned on a falling edge: %v, %v", r.level, r.err)
	default:
	}
	s.Release(gpioButton) // back to the pull-up: rising
	if r := <-got; r.err != nil || r.level != hal.High {
		t.Fatalf("rising: %v, %v", r.level, r.err)
	}

	// Timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := button.WaitForEdge(ctx, hal.EdgeBoth); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("timeout: %v", err)
	}
	if s.Waiters(gpioButton) != 0 {
		t.Error("a timed-out wait is still registered")
	}
	if _, err := button.WaitForEdge(ctx, "sideways"); err == nil {
		t.Error("bad edge accepted")
	}
}

func TestWaitForEdgeNeedsConfiguredEdge(t *testing.T) {
	cfg := hal.Config{Pins: []hal.PinConfig{
		{Name: "plain", GPIO: 4, Mode: hal.ModeIn},
		{Name: "rise", GPIO: 5, Mode: hal.ModeIn, Edge: hal.EdgeRising},
	}}
	b := open(t, sim.New(), cfg)
	if _, err := pin(t, b, "plain").WaitForEdge(context.Background(), hal.EdgeBoth); err == nil || !strings.Contains(err.Error(), `pin "plain" (GPIO4): no edge detection configured`) {
		t.Errorf("plain: %v", err)
	}
	if _, err := pin(t, b, "rise").WaitForEdge(context.Background(), hal.EdgeFalling); err == nil || !strings.Contains(err.Error(), "rising edges only") {
		t.Errorf("rise: %v", err)
	}
}

func TestWiredOutputToInput(t *testing.T) {
	s := sim.New()
	cfg := testConfig()
	cfg.Pins = append(cfg.Pins, hal.PinConfig{Name: "loop", GPIO: gpioLoop, Mode: hal.ModeIn, Edge: hal.EdgeBoth})
	s.Wire(gpioLED, gpioLoop)
	b := open(t, s, cfg)
	led, loop := pin(t, b, "led"), pin(t, b, "loop")
	got := waitAsync(t, s, gpioLoop, func(ctx context.Context) (hal.Level, error) { return loop.WaitForEdge(ctx, hal.EdgeRising) })
	if err := led.Write(hal.High); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.level != hal.High {
		t.Fatalf("wired rising: %v, %v", r.level, r.err)
	}
	if l, _ := loop.Read(); l != hal.High {
		t.Error("wired input does not follow the output")
	}
}

func TestCloseDrivesSafeAndIsIdempotent(t *testing.T) {
	s := sim.New()
	cfg := testConfig()
	cfg.Pins[0].Safe = hal.High // led: on when the board closes
	cfg.Pins[1].MaxOn = time.Hour
	b, err := hal.Open(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	relay, button := pin(t, b, "relay"), pin(t, b, "button")
	relay.Write(hal.High)
	waiting := waitAsync(t, s, gpioButton, func(ctx context.Context) (hal.Level, error) { return button.WaitForEdge(ctx, hal.EdgeBoth) })
	pulsing := make(chan error, 1)
	led := pin(t, b, "led")
	go func() { pulsing <- led.Pulse(context.Background(), time.Minute) }()
	eventually(t, func() bool { return s.Level(gpioLED) == hal.High })

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Level(gpioRelay) != hal.High {
		t.Error("relay (active-low) not returned to safe off = electrically high")
	}
	if s.Level(gpioLED) != hal.High {
		t.Error("led not at its Safe high")
	}
	if r := <-waiting; r.err == nil || !strings.Contains(r.err.Error(), "closed") {
		t.Errorf("wait across Close: %v", r.err)
	}
	if err := <-pulsing; err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("pulse across Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := relay.Write(hal.High); err == nil || !strings.Contains(err.Error(), `pin "relay" (GPIO22): the board is closed`) {
		t.Errorf("Write after Close: %v", err)
	}
	if s.Level(gpioRelay) != hal.High {
		t.Error("a write after Close reached the pin")
	}
}

func TestBus(t *testing.T) {
	s := sim.New()
	var regs [256]byte
	regs[0x10], regs[0x11] = 0xbe, 0xef
	s.AttachBus("1", simtest.NewRegisterBus(map[uint16][256]byte{0x48: regs}))
	b := open(t, s, hal.Config{Buses: []hal.BusConfig{{Name: "sensors", Bus: "/dev/i2c-1"}, {Name: "other", Bus: "3"}}})
	h, err := b.Bus("sensors")
	if err != nil {
		t.Fatal(err)
	}
	r := make([]byte, 2)
	if err := h.Tx(context.Background(), 0x48, []byte{0x10}, r); err != nil || r[0] != 0xbe || r[1] != 0xef {
		t.Fatalf("Tx: % x, %v", r, err)
	}
	if err := h.Tx(context.Background(), 0x50, []byte{0}, r); err == nil || !strings.Contains(err.Error(), `bus "sensors" (I²C /dev/i2c-1): address 0x50`) {
		t.Errorf("NACK error: %v", err)
	}
	other, _ := b.Bus("other")
	if err := other.Tx(context.Background(), 0x48, nil, r); err == nil || !strings.Contains(err.Error(), `bus "other" (I²C 3)`) {
		t.Errorf("unattached bus: %v", err)
	}
	if len(b.Buses()) != 2 || b.Buses()[0].Name() != "other" {
		t.Error("Buses() not sorted")
	}
}

// eventually polls cond for up to 5 s.
func eventually(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}
