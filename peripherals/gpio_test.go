package peripherals_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/hal/simtest"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/tools"
)

const (
	gpioLED    = 17
	gpioRelay  = 22
	gpioButton = 27
	gpioLoop   = 5 // wired from the LED
	gpioPlain  = 6 // an input without edge detection
	fakeTTY    = "/dev/ttyFAKE0"
)

type env struct {
	sim   *sim.Sim
	board *hal.Board
	reg   *tools.Registry
	dev   *simtest.ScriptedDevice
}

func testConfig() hal.Config {
	return hal.Config{
		Pins: []hal.PinConfig{
			{Name: "led", GPIO: gpioLED, Mode: hal.ModeOut},
			{Name: "relay", GPIO: gpioRelay, Mode: hal.ModeOut, ActiveLow: true, MaxOn: 30 * time.Millisecond},
			{Name: "button", GPIO: gpioButton, Mode: hal.ModeIn, Pull: hal.PullUp, Edge: hal.EdgeBoth},
			{Name: "loop", GPIO: gpioLoop, Mode: hal.ModeIn, Edge: hal.EdgeBoth},
			{Name: "plain", GPIO: gpioPlain, Mode: hal.ModeIn, Pull: hal.PullDown},
		},
		Ports: []hal.PortConfig{{Name: "arduino", Device: fakeTTY, Baud: 115200}},
	}
}

func newEnv(t testing.TB, cfg hal.Config) *env {
	t.Helper()
	s := sim.New()
	s.Wire(gpioLED, gpioLoop)
	dev := simtest.NewScriptedDevice(map[string]string{"PING": "PONG", "TEMP?": "T=21.5"})
	s.Attach(fakeTTY, dev)
	b, err := hal.Open(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	reg := tools.NewRegistry()
	if err := peripherals.Register(reg, b); err != nil {
		t.Fatal(err)
	}
	return &env{sim: s, board: b, reg: reg, dev: dev}
}

// kv builds the params of a call: "pin", "led", "value", 1, ...
func kv(pairs ...any) []grammar.Param {
	var ps []grammar.Param
	for i := 0; i < len(pairs); i += 2 {
		var v grammar.Value
		switch x := pairs[i+1].(type) {
		case string:
			v = grammar.StringValue(x)
		case int:
			v = grammar.IntValue(int64(x))
		case bool:
			v = grammar.BoolValue(x)
		}
		ps = append(ps, grammar.Param{Key: pairs[i].(string), Value: v})
	}
	return ps
}

// call validates params against the tool's spec and runs it, as the runner does.
func (e *env) call(ctx context.Context, name string, params []grammar.Param) (tools.Result, error) {
	tl, err := e.reg.Lookup(name)
	if err != nil {
		return tools.Result{}, err
	}
	args, err := tl.Spec().Validate(params)
	if err != nil {
		return tools.Result{}, err
	}
	return tl.Run(ctx, args)
}

func (e *env) must(t testing.TB, name string, pairs ...any) tools.Result {
	t.Helper()
	r, err := e.call(context.Background(), name, kv(pairs...))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func checkLevel(t *testing.T, r tools.Result, pin string, value int) {
	t.Helper()
	level := "low"
	if value == 1 {
		level = "high"
	}
	if r.Fields["pin"].Str != pin || r.Fields["value"].Kind != grammar.Int || r.Fields["value"].Int != int64(value) || r.Fields["level"].Str != level {
		t.Errorf("fields %+v, want pin %s value %d level %s", r.Fields, pin, value, level)
	}
}

func TestRegister(t *testing.T) {
	e := newEnv(t, testConfig())
	var names []string
	for _, s := range e.reg.Specs() {
		names = append(names, s.Name)
		if strings.Contains(s.Doc, "\n") || s.Doc == "" {
			t.Errorf("%s: doc must be one line", s.Name)
		}
	}
	want := []string{"gpio/list", "gpio/pulse", "gpio/read", "gpio/toggle", "gpio/wait", "gpio/write", "i2c/list", "serial/expect", "serial/list", "serial/read", "serial/send"}
	if !slices.Equal(names, want) {
		t.Errorf("registered %v", names)
	}
	enum := func(tool string) []string {
		tl, _ := e.reg.Lookup(tool)
		return tl.Spec().Params[0].Enum
	}
	if got := enum("gpio/read"); !slices.Equal(got, []string{"button", "led", "loop", "plain", "relay"}) {
		t.Errorf("read enum %v", got)
	}
	if got := enum("gpio/write"); !slices.Equal(got, []string{"led", "relay"}) {
		t.Errorf("write enum %v", got)
	}
	if got := enum("gpio/wait"); !slices.Equal(got, []string{"button", "loop"}) {
		t.Errorf("wait enum %v (inputs with edge detection)", got)
	}
	if got := enum("serial/send"); !slices.Equal(got, []string{"arduino"}) {
		t.Errorf("serial enum %v", got)
	}

	// Nothing to act on: only the list tools.
	bare := newEnv(t, hal.Config{Pins: []hal.PinConfig{{Name: "in", GPIO: 4, Mode: hal.ModeIn}}})
	names = nil
	for _, s := range bare.reg.Specs() {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, []string{"gpio/list", "gpio/read", "i2c/list", "serial/list"}) {
		t.Errorf("bare board registered %v", names)
	}
	r := bare.must(t, "serial/list")
	if r.Text != "no serial ports configured" || len(r.Fields["ports"].Items) != 0 {
		t.Errorf("serial/list on no ports: %+v", r)
	}
}

func TestEnumRejectsUnconfigured(t *testing.T) {
	e := newEnv(t, testConfig())
	for _, tc := range []struct {
		tool string
		args []any
		want string
	}{
		{"gpio/write", []any{"pin", "nope", "value", 1}, `gpio/write: parameter "pin" is "nope", must be one of led, relay`},
		{"gpio/write", []any{"pin", "button", "value", 1}, `must be one of led, relay`},
		{"gpio/write", []any{"pin", "led", "value", 2}, `parameter "value" is 2, must be at most 1`},
		{"gpio/read", []any{"pin", "gpio17"}, `must be one of button, led, loop, plain, relay`},
		{"gpio/wait", []any{"pin", "led", "edge", "rising"}, `must be one of button, loop`},
		{"gpio/wait", []any{"pin", "button", "edge", "up"}, `parameter "edge" is "up", must be one of rising, falling, both`},
		{"gpio/pulse", []any{"pin", "led", "ms", 0}, `must be at least 1`},
		{"serial/send", []any{"port", "ttyUSB0", "data", "x"}, `must be one of arduino`},
	} {
		_, err := e.call(context.Background(), tc.tool, kv(tc.args...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s%v: error %v, want %s", tc.tool, tc.args, err, tc.want)
		}
	}
	if e.sim.Level(gpioLED) != hal.Low {
		t.Error("a rejected call reached the pin")
	}
}

func TestWriteReadToggle(t *testing.T) {
	e := newEnv(t, testConfig())
	r := e.must(t, "gpio/write", "pin", "led", "value", 1)
	if r.Text != "led = 1 (high)" {
		t.Errorf("Text %q", r.Text)
	}
	checkLevel(t, r, "led", 1)
	if e.sim.Level(gpioLED) != hal.High {
		t.Error("led not high on the wire")
	}
	checkLevel(t, e.must(t, "gpio/read", "pin", "led"), "led", 1)
	checkLevel(t, e.must(t, "gpio/toggle", "pin", "led"), "led", 0)
	if e.sim.Level(gpioLED) != hal.Low {
		t.Error("toggle did not reach the wire")
	}
	// Inputs read their pull: button up, plain down.
	checkLevel(t, e.must(t, "gpio/read", "pin", "button"), "button", 1)
	checkLevel(t, e.must(t, "gpio/read", "pin", "plain"), "plain", 0)
}

func TestActiveLowRelay(t *testing.T) {
	e := newEnv(t, testConfig())
	if e.sim.Level(gpioRelay) != hal.High {
		t.Fatal("active-low relay should start off = electrically high")
	}
	checkLevel(t, e.must(t, "gpio/write", "pin", "relay", "value", 1), "relay", 1)
	if e.sim.Level(gpioRelay) != hal.Low {
		t.Error("relay on should be electrically low")
	}
	checkLevel(t, e.must(t, "gpio/read", "pin", "relay"), "relay", 1)
}

func TestMaxOnAutoOff(t *testing.T) {
	e := newEnv(t, testConfig()) // relay max_on 30 ms
	e.must(t, "gpio/write", "pin", "relay", "value", 1)
	deadline := time.Now().Add(5 * time.Second)
	for e.sim.Level(gpioRelay) != hal.High {
		if time.Now().After(deadline) {
			t.Fatal("relay still on long after max_on")
		}
		time.Sleep(time.Millisecond)
	}
	checkLevel(t, e.must(t, "gpio/read", "pin", "relay"), "relay", 0)
}

func TestPulse(t *testing.T) {
	e := newEnv(t, testConfig())
	edges := e.sim.Edges(gpioLED)
	start := time.Now()
	r := e.must(t, "gpio/pulse", "pin", "led", "ms", 20)
	if time.Since(start) < 20*time.Millisecond {
		t.Errorf("pulse returned after %v", time.Since(start))
	}
	checkLevel(t, r, "led", 0)
	if r.Fields["ms"].Int != 20 || r.Text != "led pulsed high for 20 ms, now 0 (low)" {
		t.Errorf("result %+v", r)
	}
	if e.sim.Level(gpioLED) != hal.Low || e.sim.Edges(gpioLED)-edges != 2 {
		t.Errorf("after pulse: level %v, %d edges", e.sim.Level(gpioLED), e.sim.Edges(gpioLED)-edges)
	}

	// Cancelled mid-pulse: restored at once, error returned.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start = time.Now()
	if _, err := e.call(ctx, "gpio/pulse", kv("pin", "led", "ms", 60000)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled pulse: %v", err)
	}
	if time.Since(start) > 5*time.Second || e.sim.Level(gpioLED) != hal.Low {
		t.Error("cancelled pulse not restored promptly")
	}
}

// waitTool runs gpio/wait in the background and returns once it is blocked.
func (e *env) waitTool(t *testing.T, gpio int, ctx context.Context, pairs ...any) <-chan struct {
	r   tools.Result
	err error
} {
	t.Helper()
	ch := make(chan struct {
		r   tools.Result
		err error
	}, 1)
	n := e.sim.Waiters(gpio)
	go func() {
		r, err := e.call(ctx, "gpio/wait", kv(pairs...))
		ch <- struct {
			r   tools.Result
			err error
		}{r, err}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for e.sim.Waiters(gpio) == n {
		if time.Now().After(deadline) {
			t.Fatal("gpio/wait never blocked")
		}
		time.Sleep(time.Millisecond)
	}
	return ch
}

func TestWaitSeesEdge(t *testing.T) {
	e := newEnv(t, testConfig())
	got := e.waitTool(t, gpioButton, context.Background(), "pin", "button", "edge", "falling")
	e.sim.Drive(gpioButton, hal.Low) // pressed (pull-up button to ground)
	res := <-got
	if res.err != nil {
		t.Fatal(res.err)
	}
	checkLevel(t, res.r, "button", 0)
	if res.r.Fields["edge"].Str != "falling" || res.r.Text != "button: falling edge, now 0 (low)" {
		t.Errorf("result %+v", res.r)
	}
}

func TestWaitTimesOut(t *testing.T) {
	e := newEnv(t, testConfig())
	start := time.Now()
	_, err := e.call(context.Background(), "gpio/wait", kv("pin", "button", "edge", "rising", "timeout_ms", 30))
	if !errors.Is(err, peripherals.ErrTimeout) || err.Error() != "no rising edge on button within 30 ms: timed out" {
		t.Fatalf("timeout error: %v", err)
	}
	if d := time.Since(start); d < 30*time.Millisecond || d > 5*time.Second {
		t.Errorf("timed out after %v", d)
	}
	if e.sim.Waiters(gpioButton) != 0 {
		t.Error("waiter left behind")
	}
	// The caller's own cancellation is its error, not a timeout.
	ctx, cancel := context.WithCancel(context.Background())
	got := e.waitTool(t, gpioButton, ctx, "pin", "button", "edge", "both")
	cancel()
	if res := <-got; !errors.Is(res.err, context.Canceled) {
		t.Errorf("cancelled wait: %v", res.err)
	}
}

func TestWiredOutputToInput(t *testing.T) {
	e := newEnv(t, testConfig())
	got := e.waitTool(t, gpioLoop, context.Background(), "pin", "loop", "edge", "rising", "timeout_ms", 5000)
	e.must(t, "gpio/write", "pin", "led", "value", 1)
	res := <-got
	if res.err != nil {
		t.Fatal(res.err)
	}
	checkLevel(t, res.r, "loop", 1)
	checkLevel(t, e.must(t, "gpio/read", "pin", "loop"), "loop", 1)
}

func TestGPIOList(t *testing.T) {
	e := newEnv(t, testConfig())
	e.must(t, "gpio/write", "pin", "led", "value", 1)
	r := e.must(t, "gpio/list")
	want := strings.Join([]string{
		"NAME    GPIO  MODE  LEVEL     ACTIVE_LOW",
		"button  27    in    1 (high)  false",
		"led     17    out   1 (high)  false",
		"loop    5     in    1 (high)  false",
		"plain   6     in    0 (low)   false",
		"relay   22    out   0 (low)   true",
	}, "\n")
	if r.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", r.Text, want)
	}
	var names []string
	for _, v := range r.Fields["pins"].Items {
		names = append(names, v.Str)
	}
	if r.Fields["pins"].Kind != grammar.Array || strings.Join(names, ",") != "button,led,loop,plain,relay" {
		t.Errorf("pins %+v", r.Fields["pins"])
	}
}

func TestCloseReturnsOutputsToSafe(t *testing.T) {
	cfg := testConfig()
	cfg.Pins[1].MaxOn = time.Hour
	cfg.Pins[0].Safe = hal.Low
	e := newEnv(t, cfg)
	e.must(t, "gpio/write", "pin", "led", "value", 1)
	e.must(t, "gpio/write", "pin", "relay", "value", 1)
	if err := e.board.Close(); err != nil {
		t.Fatal(err)
	}
	if e.sim.Level(gpioLED) != hal.Low || e.sim.Level(gpioRelay) != hal.High {
		t.Errorf("after Close: led %v, relay %v (active-low off = high)", e.sim.Level(gpioLED), e.sim.Level(gpioRelay))
	}
	if _, err := e.call(context.Background(), "gpio/write", kv("pin", "led", "value", 1)); err == nil {
		t.Error("write after Close succeeded")
	}
}

func TestCancelledContext(t *testing.T) {
	e := newEnv(t, testConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		tool string
		args []any
	}{
		{"gpio/read", []any{"pin", "led"}},
		{"gpio/write", []any{"pin", "led", "value", 1}},
		{"gpio/toggle", []any{"pin", "led"}},
		{"gpio/pulse", []any{"pin", "led", "ms", 10}},
		{"gpio/wait", []any{"pin", "button", "edge", "both"}},
		{"gpio/list", nil},
		{"serial/send", []any{"port", "arduino", "data", "PING"}},
		{"serial/read", []any{"port", "arduino"}},
		{"serial/expect", []any{"port", "arduino", "pattern", "x"}},
		{"serial/list", nil},
	} {
		if _, err := e.call(ctx, c.tool, kv(c.args...)); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", c.tool, err)
		}
	}
	if e.sim.Level(gpioLED) != hal.Low || e.dev.Written() != "" {
		t.Error("a cancelled call had an effect")
	}
}

func BenchmarkGPIOWriteTool(b *testing.B) {
	e := newEnv(b, testConfig())
	tl, err := e.reg.Lookup("gpio/write")
	if err != nil {
		b.Fatal(err)
	}
	on, off := kv("pin", "led", "value", 1), kv("pin", "led", "value", 0)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		params := on
		if i&1 == 1 {
			params = off
		}
		i++
		args, err := tl.Spec().Validate(params)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tl.Run(ctx, args); err != nil {
			b.Fatal(err)
		}
	}
}
