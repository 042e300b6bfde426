package peripherals

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

// ErrNoDevice is wrapped by the error of i2c/read and i2c/write when nothing
// answers at the address.
var ErrNoDevice = errors.New("no device answers")

const (
	// i2c/scan probes 0x08..0x77: 0x00..0x07 and 0x78..0x7f are reserved
	// (general call, CBUS, high-speed mode, 10-bit addressing), as i2cdetect
	// skips them.
	scanFirst = 0x08
	scanLast  = 0x77
	// maxI2CBytes bounds one read or write: the SMBus block size, and more
	// than any register map a sensor reads in one go.
	maxI2CBytes = 32
)

// errNoneAnswered is returned inside a scan in which no address answered, so
// the bus handle reopens the bus next time: an adapter that went away and came
// back is found again.
var errNoneAnswered = errors.New("no device answered the scan")

func busParam(buses []string) grammar.ArgSpec {
	return grammar.ArgSpec{Name: "bus", Doc: "the I2C bus", Type: grammar.TypeString, Required: true, Enum: buses}
}

func addrParam() grammar.ArgSpec {
	return grammar.ArgSpec{Name: "addr", Doc: "the 7-bit device address, 0x03..0x77 (i2c/scan lists them)", Type: grammar.TypeInteger, Required: true, Min: tools.Float(0x03), Max: tools.Float(0x77)}
}

func regParam(doc string, required bool) grammar.ArgSpec {
	return grammar.ArgSpec{Name: "reg", Doc: doc, Type: grammar.TypeInteger, Required: required, Min: tools.Float(0), Max: tools.Float(255)}
}

// busDevice is the character device of h: "/dev/i2c-1" whether the config
// says "1" or "/dev/i2c-1".
func busDevice(h *hal.BusHandle) string {
	if _, err := strconv.Atoi(h.Device()); err == nil {
		return "/dev/i2c-" + h.Device()
	}
	return h.Device()
}

// where starts every error: "i2c sensors (/dev/i2c-1)".
func where(h *hal.BusHandle) string { return fmt.Sprintf("i2c %s (%s)", h.Name(), busDevice(h)) }

// probe reports whether a device acknowledges addr. It reads one byte: an
// empty transaction would be a quick write, but periph returns nil for one
// without touching the bus, so every address would seem to answer. A 1-byte
// read is what i2cdetect uses where a quick write is unsafe; on a register
// device it only advances the register pointer.
func probe(bus hal.Bus, addr uint16) bool {
	var b [1]byte
	return bus.Tx(addr, nil, b[:]) == nil
}

// tx does one transaction at addr, holding the bus. what describes it for
// the error: "reading 2 bytes from register 0x10".
//
// Linux reports "nothing at this address" and "the device refused this
// transfer" alike, as an I/O error whose errno periph flattens, so when the
// transaction fails a probe tells the two apart.
func tx(ctx context.Context, h *hal.BusHandle, addr uint16, w, r []byte, what string) error {
	var failed error
	err := h.Do(ctx, func(bus hal.Bus) error {
		err := bus.Tx(addr, w, r)
		switch {
		case err == nil:
			return nil
		case probe(bus, addr):
			failed = fmt.Errorf("%s: device %#02x failed %s: %w", where(h), addr, what, err)
		default:
			failed = fmt.Errorf("%s: %w at %#02x", where(h), ErrNoDevice, addr)
		}
		// Returned so the handle reopens the bus: the failure may be the
		// adapter, not the device.
		return failed
	})
	if failed != nil {
		return failed // Do's wrapping would name the bus twice
	}
	return err
}

func hexBytes(b []byte) string { return fmt.Sprintf("% x", b) }

func intArray(b []byte) grammar.Value {
	items := make([]grammar.Value, len(b))
	for i, v := range b {
		items[i] = num(int(v))
	}
	return grammar.ArrayValue(items...)
}

func byteCount(n int) string {
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// i2c/scan

type i2cScan struct {
	tool
	b *hal.Board
}

func newI2CScan(b *hal.Board, buses []string) *i2cScan {
	return &i2cScan{b: b, tool: tool{grammar.ToolSpec{
		Name:   "i2c/scan",
		Doc:    "List the addresses (0x08..0x77) where a device answers on an I2C bus; each is probed with a 1-byte read.",
		Params: []grammar.ArgSpec{busParam(buses)},
	}}}
}

// Run finds nothing without an error: an empty bus is an answer.
func (t *i2cScan) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	h, err := t.b.Bus(a.String("bus"))
	if err != nil {
		return tools.Result{}, err
	}
	var found []byte
	err = h.Do(ctx, func(bus hal.Bus) error {
		for addr := scanFirst; addr <= scanLast; addr++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if probe(bus, uint16(addr)) {
				found = append(found, byte(addr))
			}
		}
		if len(found) == 0 {
			return errNoneAnswered
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoneAnswered) {
		return tools.Result{}, err
	}
	text := fmt.Sprintf("%s: no device answers at %#02x..%#02x", h.Name(), scanFirst, scanLast)
	if len(found) > 0 {
		addrs := make([]string, len(found))
		for i, addr := range found {
			addrs[i] = fmt.Sprintf("%#02x", addr)
		}
		text = h.Name() + ": " + strings.Join(addrs, ", ")
	}
	return tools.Result{
		Text:   text,
		Fields: map[string]grammar.Value{"bus": str(h.Name()), "addresses": intArray(found)},
	}, nil
}

// i2c/read

type i2cRead struct {
	tool
	b *hal.Board
}

func newI2CRead(b *hal.Board, buses []string) *i2cRead {
	return &i2cRead{b: b, tool: tool{grammar.ToolSpec{
		Name: "i2c/read",
		Doc:  "Read len bytes from a device on an I2C bus, from register reg on (registers auto-increment); without reg, a plain read.",
		Params: []grammar.ArgSpec{
			busParam(buses),
			addrParam(),
			regParam("the first register to read; without it the device sends what it has", false),
			{Name: "len", Doc: "how many bytes", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(maxI2CBytes), Default: 1},
		},
	}}}
}

func (t *i2cRead) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	h, err := t.b.Bus(a.String("bus"))
	if err != nil {
		return tools.Result{}, err
	}
	addr := uint16(a.Int("addr"))
	got := make([]byte, a.Int("len"))
	var w []byte
	what := "a read of " + byteCount(len(got))
	at := fmt.Sprintf("%s %#02x", h.Name(), addr)
	if a.Has("reg") {
		reg := byte(a.Int("reg"))
		w = []byte{reg}
		what = fmt.Sprintf("reading %s from register %#02x", byteCount(len(got)), reg)
		at += fmt.Sprintf(" reg %#02x", reg)
	}
	if err := tx(ctx, h, addr, w, got, what); err != nil {
		return tools.Result{}, err
	}
	r := tools.Result{
		Text: fmt.Sprintf("%s: %s", at, hexBytes(got)),
		Fields: map[string]grammar.Value{
			"bus":   str(h.Name()),
			"addr":  num(int(addr)),
			"bytes": intArray(got),
			"hex":   str(hexBytes(got)),
		},
	}
	if a.Has("reg") {
		r.Fields["reg"] = num(int(a.Int("reg")))
	}
	return r, nil
}

// i2c/write

type i2cWrite struct {
	tool
	b *hal.Board
}

func newI2CWrite(b *hal.Board, buses []string) *i2cWrite {
	return &i2cWrite{b: b, tool: tool{grammar.ToolSpec{
		Name: "i2c/write",
		Doc:  "Write 1 to 32 bytes to a device on an I2C bus, from register reg on: the device receives reg, then data.",
		Params: []grammar.ArgSpec{
			busParam(buses),
			addrParam(),
			regParam("the first register to write", true),
			{Name: "data", Doc: "the bytes, 1 to 32 of them: (0x01,0xff)", Type: grammar.TypeArray, Required: true,
				MinItems: 1, MaxItems: maxI2CBytes,
				Items: &grammar.ArgSpec{Type: grammar.TypeInteger, Min: tools.Float(0), Max: tools.Float(255)}},
		},
	}}}
}

func (t *i2cWrite) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	v, _ := a.Value("data")
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	h, err := t.b.Bus(a.String("bus"))
	if err != nil {
		return tools.Result{}, err
	}
	addr := uint16(a.Int("addr"))
	reg := byte(a.Int("reg"))
	data := make([]byte, len(v.Items))
	for i, it := range v.Items {
		data[i] = byte(it.Int)
	}
	what := fmt.Sprintf("writing %s to register %#02x", byteCount(len(data)), reg)
	if err := tx(ctx, h, addr, append([]byte{reg}, data...), nil, what); err != nil {
		return tools.Result{}, err
	}
	return tools.Result{
		Text: fmt.Sprintf("%s %#02x reg %#02x: wrote %s", h.Name(), addr, reg, hexBytes(data)),
		Fields: map[string]grammar.Value{
			"bus":  str(h.Name()),
			"addr": num(int(addr)),
			"reg":  num(int(reg)),
			"data": intArray(data),
			"hex":  str(hexBytes(data)),
		},
	}, nil
}

// i2c/list

type i2cList struct {
	tool
	b *hal.Board
}

func newI2CList(b *hal.Board) *i2cList {
	return &i2cList{b: b, tool: tool{grammar.ToolSpec{
		Name: "i2c/list",
		Doc:  "List the configured I2C buses with their device.",
	}}}
}

func (t *i2cList) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	buses := t.b.Buses()
	names := make([]grammar.Value, len(buses))
	var sb strings.Builder
	if len(buses) == 0 {
		sb.WriteString("no I2C buses configured")
	} else {
		w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tDEVICE")
		for i, h := range buses {
			names[i] = str(h.Name())
			fmt.Fprintf(w, "%s\t%s\n", h.Name(), busDevice(h))
		}
		w.Flush()
	}
	return tools.Result{
		Text:   strings.TrimRight(sb.String(), "\n"),
		Fields: map[string]grammar.Value{"buses": grammar.ArrayValue(names...)},
	}, nil
}
