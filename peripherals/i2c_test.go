package peripherals_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/hal/simtest"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/tools"
)

const (
	addrHDC = 0x40 // a humidity sensor on "sensors"
	addrBME = 0x76 // a BME280 on "sensors": chip id 0x60 at 0xd0
	addrROM = 0x50 // an EEPROM on "aux"
)

// bme280 is the register map of the BME280: the chip id, and a burst of
// measurement registers from 0xf7 on.
func bme280() [256]byte {
	var r [256]byte
	r[0xd0] = 0x60
	r[0xd1] = 0xd1
	copy(r[0xf7:], []byte{0x51, 0x23, 0x40, 0x7e, 0xa5, 0x00})
	r[0xff] = 0xee
	r[0x00] = 0x0a
	return r
}

// i2cConfig has two buses: sensors by number, aux by device path.
func i2cConfig() hal.Config {
	cfg := testConfig()
	cfg.Buses = []hal.BusConfig{{Name: "sensors", Bus: "1"}, {Name: "aux", Bus: "/dev/i2c-3"}}
	return cfg
}

type i2cEnv struct {
	*env
	sensors, aux *simtest.RegisterBus
}

// newI2CEnv serves bus 1 with sensors (0x40, 0x76) and bus 3 with aux (0x50);
// wrap, when not nil, stands between a bus and the board.
func newI2CEnv(t testing.TB, cfg hal.Config, wrap func(bus string, b hal.Bus) hal.Bus) *i2cEnv {
	t.Helper()
	e := &i2cEnv{
		sensors: simtest.NewRegisterBus(map[uint16][256]byte{addrHDC: {}, addrBME: bme280()}),
		aux:     simtest.NewRegisterBus(map[uint16][256]byte{addrROM: {0x00: 0xc0, 0x01: 0xde}}),
	}
	if wrap == nil {
		wrap = func(_ string, b hal.Bus) hal.Bus { return b }
	}
	s := sim.New()
	s.AttachBus("/dev/i2c-1", wrap("1", e.sensors)) // the config says "1": the same bus
	s.AttachBus("3", wrap("3", e.aux))
	b, err := hal.Open(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	reg := tools.NewRegistry()
	if err := peripherals.Register(reg, b); err != nil {
		t.Fatal(err)
	}
	e.env = &env{sim: s, board: b, reg: reg}
	return e
}

// data is an array param of integers: data=(1,2,3).
func data(key string, vs ...int) grammar.Param {
	items := make([]grammar.Value, len(vs))
	for i, v := range vs {
		items[i] = grammar.IntValue(int64(v))
	}
	return grammar.Param{Key: key, Value: grammar.ArrayValue(items...)}
}

func ints(t *testing.T, v grammar.Value) []int {
	t.Helper()
	if v.Kind != grammar.Array {
		t.Fatalf("%+v is not an array", v)
	}
	out := []int{}
	for _, it := range v.Items {
		if it.Kind != grammar.Int {
			t.Fatalf("item %+v is not an integer", it)
		}
		out = append(out, int(it.Int))
	}
	return out
}

func (e *i2cEnv) transactions() int { return len(e.sensors.Transactions()) + len(e.aux.Transactions()) }

func TestI2CRegister(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	var names []string
	for _, s := range e.reg.Specs() {
		if strings.HasPrefix(s.Name, "i2c/") {
			names = append(names, s.Name)
		}
		if strings.Contains(s.Doc, "\n") || s.Doc == "" {
			t.Errorf("%s: doc must be one line", s.Name)
		}
	}
	if !slices.Equal(names, []string{"i2c/list", "i2c/read", "i2c/scan", "i2c/write"}) {
		t.Errorf("registered %v", names)
	}
	for _, name := range []string{"i2c/scan", "i2c/read", "i2c/write"} {
		tl, _ := e.reg.Lookup(name)
		if p := tl.Spec().Params[0]; p.Name != "bus" || !slices.Equal(p.Enum, []string{"aux", "sensors"}) {
			t.Errorf("%s: bus param %+v", name, p)
		}
	}
	if !slices.Contains(e.reg.Namespaces(), "i2c") {
		t.Errorf("namespaces %v", e.reg.Namespaces())
	}

	// No buses: only i2c/list, which says so.
	bare := newEnv(t, testConfig())
	names = nil
	for _, s := range bare.reg.Specs() {
		if strings.HasPrefix(s.Name, "i2c/") {
			names = append(names, s.Name)
		}
	}
	if !slices.Equal(names, []string{"i2c/list"}) {
		t.Errorf("board without buses registered %v", names)
	}
	r := bare.must(t, "i2c/list")
	if r.Text != "no I2C buses configured" || r.Fields["buses"].Kind != grammar.Array || len(r.Fields["buses"].Items) != 0 {
		t.Errorf("i2c/list on no buses: %+v", r)
	}
}

func TestI2CScan(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	r := e.must(t, "i2c/scan", "bus", "sensors")
	if r.Text != "sensors: 0x40, 0x76" || r.Fields["bus"].Str != "sensors" {
		t.Errorf("scan: %+v", r)
	}
	if got := ints(t, r.Fields["addresses"]); !slices.Equal(got, []int{addrHDC, addrBME}) {
		t.Errorf("addresses %v", got)
	}
	// Every address 0x08..0x77 probed once, with a 1-byte read and no write.
	txs := e.sensors.Transactions()
	if len(txs) != 0x77-0x08+1 || txs[0] != "0x08 w= r=1" || txs[len(txs)-1] != "0x77 w= r=1" {
		t.Errorf("%d probes, first %q, last %q", len(txs), txs[0], txs[len(txs)-1])
	}
	if len(e.aux.Transactions()) != 0 {
		t.Error("scanning sensors touched aux")
	}

	r = e.must(t, "i2c/scan", "bus", "aux")
	if got := ints(t, r.Fields["addresses"]); r.Text != "aux: 0x50" || !slices.Equal(got, []int{addrROM}) {
		t.Errorf("scan aux: %+v", r)
	}

	// An empty bus is an answer, not an error.
	cfg := i2cConfig()
	cfg.Buses = append(cfg.Buses, hal.BusConfig{Name: "empty", Bus: "4"})
	e = newI2CEnv(t, cfg, nil)
	e.sim.AttachBus("4", simtest.NewRegisterBus(nil))
	r = e.must(t, "i2c/scan", "bus", "empty")
	if r.Text != "empty: no device answers at 0x08..0x77" || len(ints(t, r.Fields["addresses"])) != 0 {
		t.Errorf("scan of an empty bus: %+v", r)
	}
	// ... and the bus still works afterwards.
	if got := ints(t, e.must(t, "i2c/scan", "bus", "sensors").Fields["addresses"]); len(got) != 2 {
		t.Errorf("after the empty scan: %v", got)
	}
}

func TestI2CRead(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	r := e.must(t, "i2c/read", "bus", "sensors", "addr", addrBME, "reg", 0xd0)
	if r.Text != "sensors 0x76 reg 0xd0: 60" || r.Fields["hex"].Str != "60" || r.Fields["bus"].Str != "sensors" ||
		r.Fields["addr"].Int != addrBME || r.Fields["reg"].Int != 0xd0 || !slices.Equal(ints(t, r.Fields["bytes"]), []int{0x60}) {
		t.Errorf("chip id: %+v", r)
	}

	// Without reg: a plain read, from where the pointer was left.
	r = e.must(t, "i2c/read", "bus", "sensors", "addr", addrBME)
	if r.Text != "sensors 0x76: d1" || !slices.Equal(ints(t, r.Fields["bytes"]), []int{0xd1}) {
		t.Errorf("plain read: %+v", r)
	}
	if _, ok := r.Fields["reg"]; ok {
		t.Error("a plain read reports a register")
	}
	if txs := e.sensors.Transactions(); txs[len(txs)-1] != "0x76 w= r=1" {
		t.Errorf("plain read did %q", txs[len(txs)-1])
	}

	// A burst: the register pointer auto-increments.
	r = e.must(t, "i2c/read", "bus", "sensors", "addr", addrBME, "reg", 0xf7, "len", 6)
	regs := e.sensors.Registers(addrBME)
	want := []int{}
	for _, v := range regs[0xf7:0xfd] {
		want = append(want, int(v))
	}
	if got := ints(t, r.Fields["bytes"]); !slices.Equal(got, want) || r.Fields["hex"].Str != "51 23 40 7e a5 00" ||
		r.Text != "sensors 0x76 reg 0xf7: 51 23 40 7e a5 00" {
		t.Errorf("burst %+v, want %v", r, want)
	}
	if txs := e.sensors.Transactions(); txs[len(txs)-1] != "0x76 w=f7 r=6" {
		t.Errorf("burst did %q: one transaction, register then read", txs[len(txs)-1])
	}
	// ... and wraps at 256, as the device does.
	r = e.must(t, "i2c/read", "bus", "sensors", "addr", addrBME, "reg", 0xff, "len", 2)
	if got := ints(t, r.Fields["bytes"]); !slices.Equal(got, []int{0xee, 0x0a}) {
		t.Errorf("wrapped burst %v", got)
	}
	// The largest read.
	r = e.must(t, "i2c/read", "bus", "aux", "addr", addrROM, "reg", 0, "len", 32)
	if got := ints(t, r.Fields["bytes"]); len(got) != 32 || got[0] != 0xc0 || got[1] != 0xde {
		t.Errorf("32-byte read %v", got)
	}
}

func TestI2CWriteReadBack(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	r, err := e.call(context.Background(), "i2c/write", append(kv("bus", "sensors", "addr", addrHDC, "reg", 0x02), data("data", 0x12, 0x34)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "sensors 0x40 reg 0x02: wrote 12 34" || r.Fields["hex"].Str != "12 34" || r.Fields["reg"].Int != 2 ||
		r.Fields["addr"].Int != addrHDC || !slices.Equal(ints(t, r.Fields["data"]), []int{0x12, 0x34}) {
		t.Errorf("write: %+v", r)
	}
	if txs := e.sensors.Transactions(); len(txs) != 1 || txs[0] != "0x40 w=02 12 34 r=0" {
		t.Errorf("write did %q: one transaction, register then data", txs)
	}
	if regs := e.sensors.Registers(addrHDC); regs[2] != 0x12 || regs[3] != 0x34 || regs[1] != 0 || regs[4] != 0 {
		t.Errorf("registers % x", regs[:6])
	}
	r = e.must(t, "i2c/read", "bus", "sensors", "addr", addrHDC, "reg", 0x02, "len", 2)
	if r.Fields["hex"].Str != "12 34" {
		t.Errorf("read back %+v", r)
	}

	// 32 bytes, the most one write takes.
	vs := make([]int, 32)
	for i := range vs {
		vs[i] = 255 - i
	}
	if _, err := e.call(context.Background(), "i2c/write", append(kv("bus", "aux", "addr", addrROM, "reg", 0x10), data("data", vs...))); err != nil {
		t.Fatal(err)
	}
	if regs := e.aux.Registers(addrROM); regs[0x10] != 255 || regs[0x2f] != 224 || regs[0x30] != 0 {
		t.Errorf("32-byte write: registers % x", regs[0x10:0x31])
	}
}

// refusing fails every write at one address, though the device is there (it
// acknowledges reads): a read-only device, or one that NACKs a data byte.
type refusing struct {
	hal.Bus
	addr uint16
}

func (b refusing) Tx(addr uint16, w, r []byte) error {
	if addr == b.addr && len(w) > 0 {
		return errors.New("sysfs-i2c: remote I/O error")
	}
	return b.Bus.Tx(addr, w, r)
}

func TestI2CErrorsNameBusAndAddress(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	for _, tc := range []struct {
		tool   string
		params []grammar.Param
		want   string
	}{
		{"i2c/read", kv("bus", "sensors", "addr", 0x41), "i2c sensors (/dev/i2c-1): no device answers at 0x41"},
		{"i2c/read", kv("bus", "sensors", "addr", 0x41, "reg", 0, "len", 4), "i2c sensors (/dev/i2c-1): no device answers at 0x41"},
		{"i2c/write", append(kv("bus", "sensors", "addr", 0x41, "reg", 1), data("data", 1)), "i2c sensors (/dev/i2c-1): no device answers at 0x41"},
		{"i2c/read", kv("bus", "aux", "addr", addrBME, "reg", 0xd0), "i2c aux (/dev/i2c-3): no device answers at 0x76"},
		{"i2c/read", kv("bus", "aux", "addr", 0x03), "i2c aux (/dev/i2c-3): no device answers at 0x03"},
	} {
		_, err := e.call(context.Background(), tc.tool, tc.params)
		if err == nil || err.Error() != tc.want || !errors.Is(err, peripherals.ErrNoDevice) {
			t.Errorf("%s %v: error %v, want %s", tc.tool, tc.params, err, tc.want)
		}
	}
	// The bus is fine afterwards.
	if r := e.must(t, "i2c/read", "bus", "sensors", "addr", addrBME, "reg", 0xd0); r.Fields["hex"].Str != "60" {
		t.Errorf("after a missing device: %+v", r)
	}

	// A device that is there but refuses: the error says so, with the cause.
	e = newI2CEnv(t, i2cConfig(), func(bus string, b hal.Bus) hal.Bus {
		if bus == "1" {
			return refusing{Bus: b, addr: addrHDC}
		}
		return b
	})
	_, err := e.call(context.Background(), "i2c/write", append(kv("bus", "sensors", "addr", addrHDC, "reg", 2), data("data", 7)))
	want := "i2c sensors (/dev/i2c-1): device 0x40 failed writing 1 byte to register 0x02: sysfs-i2c: remote I/O error"
	if err == nil || err.Error() != want || errors.Is(err, peripherals.ErrNoDevice) {
		t.Errorf("refused write: %v, want %s", err, want)
	}
	_, err = e.call(context.Background(), "i2c/read", kv("bus", "sensors", "addr", addrHDC, "reg", 2, "len", 2))
	want = "i2c sensors (/dev/i2c-1): device 0x40 failed reading 2 bytes from register 0x02: sysfs-i2c: remote I/O error"
	if err == nil || err.Error() != want {
		t.Errorf("refused read: %v, want %s", err, want)
	}

	// A configured bus the board cannot open: the error names it.
	cfg := i2cConfig()
	cfg.Buses = append(cfg.Buses, hal.BusConfig{Name: "ghost", Bus: "9"})
	e = newI2CEnv(t, cfg, nil)
	_, err = e.call(context.Background(), "i2c/scan", kv("bus", "ghost"))
	if err == nil || !strings.Contains(err.Error(), `bus "ghost"`) || !strings.Contains(err.Error(), "no I²C bus 9") {
		t.Errorf("unattached bus: %v", err)
	}
}

func TestI2CValidation(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	for _, tc := range []struct {
		tool   string
		params []grammar.Param
		want   string
	}{
		{"i2c/scan", kv("bus", "main"), `i2c/scan: parameter "bus" is "main", must be one of aux, sensors`},
		{"i2c/scan", kv("bus", "1"), `must be one of aux, sensors`},
		{"i2c/scan", nil, `parameter "bus" is required`},
		{"i2c/read", kv("bus", "/dev/i2c-1", "addr", addrBME), `must be one of aux, sensors`},
		{"i2c/read", kv("bus", "sensors", "addr", 0x02), `parameter "addr" is 2, must be at least 3`},
		{"i2c/read", kv("bus", "sensors", "addr", 0x78), `parameter "addr" is 120, must be at most 119`},
		{"i2c/read", kv("bus", "sensors", "addr", 0x48, "reg", 256), `parameter "reg" is 256, must be at most 255`},
		{"i2c/read", kv("bus", "sensors", "addr", 0x48, "reg", -1), `parameter "reg" is -1, must be at least 0`},
		{"i2c/read", kv("bus", "sensors", "addr", 0x48, "len", 0), `parameter "len" is 0, must be at least 1`},
		{"i2c/read", kv("bus", "sensors", "addr", 0x48, "len", 33), `parameter "len" is 33, must be at most 32`},
		{"i2c/read", kv("bus", "sensors", "addr", "0x48"), `parameter "addr" must be an integer 3..119, got string`},
		{"i2c/write", append(kv("bus", "aux", "addr", addrROM, "reg", 0), data("data", 1, 256)), `parameter "data" item 2 is 256, must be at most 255`},
		{"i2c/write", append(kv("bus", "aux", "addr", addrROM, "reg", 0), data("data", -1)), `parameter "data" item 1 is -1, must be at least 0`},
		{"i2c/write", append(kv("bus", "aux", "addr", addrROM, "reg", 0), data("data", make([]int, 33)...)), `i2c/write: parameter "data" has 33 items, must have 1..32`},
		{"i2c/write", append(kv("bus", "aux", "addr", addrROM, "reg", 0), data("data")), `i2c/write: parameter "data" has 0 items, must have 1..32`},
		{"i2c/write", append(kv("bus", "aux", "addr", addrROM), data("data", 1)), `parameter "reg" is required`},
		{"i2c/write", kv("bus", "aux", "addr", addrROM, "reg", 0, "data", 1), `parameter "data" must be an array`},
		{"i2c/write", append(kv("bus", "aux", "addr", 0x80, "reg", 0), data("data", 1)), `must be at most 119`},
	} {
		_, err := e.call(context.Background(), tc.tool, tc.params)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: error %v, want %s", tc.tool, tc.params, err, tc.want)
		}
		var ae *grammar.ArgError
		if !errors.As(err, &ae) {
			t.Errorf("%s %v: %T is not an *grammar.ArgError", tc.tool, tc.params, err)
		}
	}
	if n := e.transactions(); n != 0 {
		t.Errorf("rejected calls reached the bus: %d transactions", n)
	}
}

// TestI2CCommandLanguage runs calls as a person types them: hex addresses,
// arrays in parentheses.
func TestI2CCommandLanguage(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	run := func(src string) tools.Result {
		t.Helper()
		cmd, err := grammar.Parse(src, grammar.ParseOptions{Namespaces: e.reg.Namespaces()})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		call := cmd.Stages[0].Calls[0]
		r, err := e.call(context.Background(), call.Tool(), call.Params)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return r
	}
	run(`@i2c/write{bus="sensors";addr=0x40;reg=0x10;data=(0xbe,0xef)}`)
	if r := run(`@i2c/read{bus="sensors";addr=0x40;reg=0x10;len=2}`); r.Fields["hex"].Str != "be ef" {
		t.Errorf("read back %+v", r)
	}
	if r := run(`@i2c/scan{bus="aux"}`); r.Text != "aux: 0x50" {
		t.Errorf("scan %+v", r)
	}
}

func TestI2CList(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	r := e.must(t, "i2c/list")
	if want := "NAME     DEVICE\naux      /dev/i2c-3\nsensors  /dev/i2c-1"; r.Text != want {
		t.Errorf("Text:\n%s\nwant:\n%s", r.Text, want)
	}
	var names []string
	for _, v := range r.Fields["buses"].Items {
		names = append(names, v.Str)
	}
	if !slices.Equal(names, []string{"aux", "sensors"}) {
		t.Errorf("buses %+v", r.Fields["buses"])
	}
	if e.transactions() != 0 {
		t.Error("i2c/list touched a bus")
	}
}

// cancelling cancels a context after n transactions, as a person pressing
// ^C in the middle of a scan would.
type cancelling struct {
	hal.Bus
	mu     sync.Mutex
	n      int
	cancel context.CancelFunc
}

func (b *cancelling) Tx(addr uint16, w, r []byte) error {
	b.mu.Lock()
	b.n--
	if b.n == 0 {
		b.cancel()
	}
	b.mu.Unlock()
	return b.Bus.Tx(addr, w, r)
}

func TestI2CCancelled(t *testing.T) {
	e := newI2CEnv(t, i2cConfig(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		tool   string
		params []grammar.Param
	}{
		{"i2c/scan", kv("bus", "sensors")},
		{"i2c/read", kv("bus", "sensors", "addr", addrBME, "reg", 0xd0)},
		{"i2c/read", kv("bus", "sensors", "addr", addrBME)},
		{"i2c/write", append(kv("bus", "sensors", "addr", addrHDC, "reg", 0), data("data", 1, 2))},
		{"i2c/list", nil},
	} {
		if _, err := e.call(ctx, c.tool, c.params); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", c.tool, err)
		}
	}
	if n := e.transactions(); n != 0 {
		t.Errorf("cancelled calls did %d transactions", n)
	}
	if regs := e.sensors.Registers(addrHDC); regs[0] != 0 || regs[1] != 0 {
		t.Error("a cancelled write reached the device")
	}

	// Cancelled in the middle of a scan: it stops at once.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	e = newI2CEnv(t, i2cConfig(), func(bus string, b hal.Bus) hal.Bus {
		if bus != "1" {
			return b
		}
		return &cancelling{Bus: b, n: 5, cancel: cancel}
	})
	_, err := e.call(ctx, "i2c/scan", kv("bus", "sensors"))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), `bus "sensors"`) {
		t.Errorf("scan cancelled midway: %v", err)
	}
	if n := len(e.sensors.Transactions()); n != 5 {
		t.Errorf("scan went on for %d probes after the cancel at the 5th", n-5)
	}
}

func ExampleRegister_i2c() {
	s := sim.New()
	s.AttachBus("1", simtest.NewRegisterBus(map[uint16][256]byte{0x76: {0xd0: 0x60}}))
	b, _ := hal.Open(s, hal.Config{Buses: []hal.BusConfig{{Name: "sensors", Bus: "1"}}})
	defer b.Close()
	reg := tools.NewRegistry()
	peripherals.Register(reg, b)

	read, _ := reg.Lookup("i2c/read")
	args, _ := read.Spec().Validate([]grammar.Param{
		{Key: "bus", Value: grammar.StringValue("sensors")},
		{Key: "addr", Value: grammar.IntValue(0x76)},
		{Key: "reg", Value: grammar.IntValue(0xd0)},
	})
	r, _ := read.Run(context.Background(), args)
	fmt.Println(r.Text)
	// Output: sensors 0x76 reg 0xd0: 60
}
