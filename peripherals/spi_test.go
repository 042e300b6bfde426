package peripherals_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

// adcTarget answers like an MCP3008 channel read: after the start bit and
// the channel byte, the 10-bit value 0x3ff in the last two bytes.
type adcTarget struct{ got [][]byte }

func (a *adcTarget) Tx(w, r []byte) error {
	a.got = append(a.got, slices.Clone(w))
	for i := range r {
		r[i] = 0
	}
	if len(r) == 3 {
		r[1], r[2] = 0x03, 0xff
	}
	return nil
}

func bytesParam(key string, bs ...int64) grammar.Param {
	items := make([]grammar.Value, len(bs))
	for i, b := range bs {
		items[i] = grammar.IntValue(b)
	}
	return grammar.Param{Key: key, Value: grammar.ArrayValue(items...)}
}

func TestSPITransfer(t *testing.T) {
	cfg := testConfig()
	cfg.SPI = []hal.SPIConfig{{Name: "adc", Dev: "0.0", Hz: 1000000}, {Name: "loop", Dev: "0.1", Hz: 500000, Mode: 3}}
	e := newEnv(t, cfg)
	adc := &adcTarget{}
	if err := e.sim.PlaceSPI("0.0", adc); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := e.call(ctx, "spi/transfer", append(kv("dev", "adc", "read", 2), bytesParam("write", 0x01)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "adc: wrote 01, read 03 ff" || r.Fields["hex"].Str != "03 ff" || len(r.Fields["received"].Items) != 3 {
		t.Errorf("spi/transfer = %+v", r)
	}
	if len(adc.got) != 1 || !slices.Equal(adc.got[0], []byte{0x01, 0, 0}) {
		t.Errorf("the device saw %x; want the write then zeros clocked for the read", adc.got)
	}
	// The sim's unplaced device is a loopback: what is sent comes back.
	r, err = e.call(ctx, "spi/transfer", append(kv("dev", "loop"), bytesParam("write", 0xde, 0xad)))
	if err != nil || r.Text != "loop: wrote de ad" || r.Fields["received"].Items[1].Int != 0xad {
		t.Errorf("loopback: %+v, %v", r, err)
	}
	if _, err := e.call(ctx, "spi/transfer", kv("dev", "loop")); err == nil || !strings.Contains(err.Error(), "spi loop: nothing to transfer") {
		t.Errorf("an empty transfer: %v", err)
	}
	if _, err := e.call(ctx, "spi/transfer", append(kv("dev", "adc"), bytesParam("write", 256))); err == nil {
		t.Error("a byte of 256 was accepted")
	}
	if _, err := e.call(ctx, "spi/transfer", kv("dev", "flash", "read", 1)); err == nil {
		t.Error("an unconfigured device was accepted")
	}
	r = e.must(t, "spi/list")
	if r.Text != "adc: /dev/spidev0.0, 1000000 Hz, mode 0\nloop: /dev/spidev0.1, 500000 Hz, mode 3" {
		t.Errorf("spi/list = %q", r.Text)
	}
	ro := func(name string) bool { tl, _ := e.reg.Lookup(name); return tools.WithoutEffects(tl) }
	if !ro("spi/list") || ro("spi/transfer") {
		t.Error("spi/list must be read-only and spi/transfer not (every byte it reads is one it writes)")
	}
	// A board without SPI devices has no SPI tools.
	bare := newEnv(t, testConfig())
	if _, err := bare.reg.Lookup("spi/list"); err == nil {
		t.Error("spi/list without SPI devices")
	}
}
