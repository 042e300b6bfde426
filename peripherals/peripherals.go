// Package peripherals is the set of tools that act on the board: gpio/* on
// pins, serial/* on ports, i2c/* on buses and spi/* on SPI devices, built
// on hal. The parameters name
// only what the board configures (pins, ports and buses are enums), so the
// grammar compiled from these specs cannot even express a call on an
// unconfigured pin.
package peripherals

import (
	"errors"
	"fmt"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

// ErrTimeout is wrapped by the error of gpio/wait when no edge came in time.
var ErrTimeout = errors.New("timed out")

// Register adds the GPIO, serial and I2C tools for b's pins, ports and buses
// to reg.
//
// A tool whose pin, port or bus parameter would have no possible value is not
// registered: gpio/write, gpio/toggle and gpio/pulse need an output; gpio/wait
// an input with edge detection configured; gpio/read any pin; serial/send,
// serial/read and serial/expect a port; i2c/scan, i2c/read and i2c/write a
// bus. gpio/list, serial/list and i2c/list always are; spi/list and
// spi/transfer when the board has an SPI device.
func Register(reg *tools.Registry, b *hal.Board) error {
	var all, outputs, waitable []string
	for _, p := range b.Pins() {
		all = append(all, p.Name())
		switch {
		case p.Mode() == hal.ModeOut:
			outputs = append(outputs, p.Name())
		case p.Config().Edge != hal.EdgeNone:
			waitable = append(waitable, p.Name())
		}
	}
	var ports []string
	for _, p := range b.Ports() {
		ports = append(ports, p.Name())
	}
	var buses []string
	for _, h := range b.Buses() {
		buses = append(buses, h.Name())
	}

	ts := []tools.Tool{newGPIOList(b), newSerialList(b), newI2CList(b)}
	if len(all) > 0 {
		ts = append(ts, newGPIORead(b, all))
	}
	if len(outputs) > 0 {
		ts = append(ts, newGPIOWrite(b, outputs), newGPIOToggle(b, outputs), newGPIOPulse(b, outputs))
	}
	if len(waitable) > 0 {
		ts = append(ts, newGPIOWait(b, waitable))
	}
	if len(ports) > 0 {
		ts = append(ts, newSerialSend(b, ports), newSerialRead(b, ports), newSerialExpect(b, ports))
	}
	if len(buses) > 0 {
		ts = append(ts, newI2CScan(b, buses), newI2CRead(b, buses), newI2CWrite(b, buses))
	}
	// The SPI tools exist only on a board with SPI devices, so a board
	// without keeps exactly the tools it had.
	var spis []string
	for _, h := range b.SPIs() {
		spis = append(spis, h.Name())
	}
	if len(spis) > 0 {
		ts = append(ts, newSPIList(b), newSPITransfer(b, spis))
	}
	if err := reg.Register(ts...); err != nil {
		return fmt.Errorf("peripherals: %w", err)
	}
	return nil
}

// tool is the part every tool shares: its spec.
type tool struct{ spec grammar.ToolSpec }

func (t *tool) Spec() grammar.ToolSpec { return t.spec }

func str(s string) grammar.Value { return grammar.StringValue(s) }
func num(i int) grammar.Value    { return grammar.IntValue(int64(i)) }

func bit(l hal.Level) int {
	if l {
		return 1
	}
	return 0
}
