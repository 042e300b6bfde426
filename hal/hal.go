// Package hal is the board abstraction: named pins, serial ports and I²C buses
// configured once, on top of a Driver that provides raw GPIO lines, ports and
// buses. Drivers live elsewhere: hal/sim (a simulated Raspberry Pi header) and
// hal/periph (real hardware through periph.io and go.bug.st/serial).
//
// A Driver speaks ELECTRICAL levels on GPIO numbers; a Board's Pin speaks
// LOGICAL levels on configured names ("relay" on = High, whatever the wiring):
// an active-low pin inverts between the two. Only configured pins, ports and
// buses exist on a Board (deny by default).
//
// hal imports nothing of clawedge, so every other layer can depend on it.
package hal

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Level is a digital level. On a Pin it is logical (High = on); on a Line it
// is electrical (High = 3.3 V).
type Level bool

const (
	Low  Level = false
	High Level = true
)

func (l Level) String() string {
	if l {
		return "high"
	}
	return "low"
}

// ParseLevel accepts low/high, 0/1, off/on and false/true, in any case.
func ParseLevel(s string) (Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low", "0", "off", "false":
		return Low, nil
	case "high", "1", "on", "true":
		return High, nil
	}
	return Low, fmt.Errorf("level %q: want low or high (or 0/1, off/on)", s)
}

// Mode is a pin's direction.
type Mode string

const (
	ModeIn  Mode = "in"
	ModeOut Mode = "out"
)

// Pull is an input's bias resistor. PullNone leaves the input floating.
type Pull string

const (
	PullNone Pull = "none"
	PullUp   Pull = "up"
	PullDown Pull = "down"
)

// Edge is a kind of level change an input can report.
type Edge string

const (
	EdgeNone    Edge = "none"
	EdgeRising  Edge = "rising"
	EdgeFalling Edge = "falling"
	EdgeBoth    Edge = "both"
)

// NoTimeout given to PortConn.SetReadTimeout makes Read block until data arrives.
const NoTimeout time.Duration = -1

// Driver is what a board driver provides: raw GPIO lines by number, in
// ELECTRICAL levels, serial ports and I²C buses. A Board owns its Driver and
// closes it.
type Driver interface {
	Name() string // "sim", "periph"
	// Line returns the line of a GPIO number (BCM numbering on a Pi).
	Line(gpio int) (Line, error)
	// OpenPort opens a serial device; its errors name the device path.
	OpenPort(device string, baud int) (PortConn, error)
	// OpenBus opens an I²C bus by number ("1") or path ("/dev/i2c-1").
	OpenBus(bus string) (Bus, error)
	Close() error
}

// Line is one GPIO line in electrical levels.
type Line interface {
	// In makes the line an input with a bias and the kind of edges WaitForEdge reports.
	In(pull Pull, edge Edge) error
	// Out makes the line an output driven to l.
	Out(l Level) error
	Read() (Level, error)
	// WaitForEdge blocks until an edge of the kind set by In happens after the
	// call, and returns the level after it; or until ctx is done (ctx.Err()).
	WaitForEdge(ctx context.Context) (Level, error)
}

// PortConn is an open serial port. After SetReadTimeout(d), Read returns
// (0, nil) when no byte arrived within d (d == 0 polls, NoTimeout blocks):
// the semantics of go.bug.st/serial.
type PortConn interface {
	io.ReadWriteCloser
	SetReadTimeout(d time.Duration) error
}

// Bus is an open I²C bus: Tx writes w then reads into r at a 7-bit address.
type Bus interface {
	Tx(addr uint16, w, r []byte) error
	Close() error
}

// PinConfig configures one named pin. Initial and Safe are logical levels:
// Initial is driven when the board opens, Safe when it closes. Edge is the
// logical kind of edges the input reports (rising = becoming active). MaxOn,
// when positive, turns an output off (Low) after it has been High that long.
type PinConfig struct {
	Name      string
	GPIO      int
	Mode      Mode
	Pull      Pull
	Edge      Edge
	ActiveLow bool
	Initial   Level
	Safe      Level
	MaxOn     time.Duration
}

// PortConfig configures one named serial port.
type PortConfig struct {
	Name   string
	Device string
	Baud   int
}

// BusConfig configures one named I²C bus; Bus is "1" or "/dev/i2c-1".
type BusConfig struct {
	Name string
	Bus  string
}

// Config is everything a Board exposes.
type Config struct {
	Pins  []PinConfig
	Ports []PortConfig
	Buses []BusConfig
	// OneWire and SPI need a driver that implements OneWireDriver or
	// SPIDriver; the board refuses to use them otherwise, at first use.
	OneWire []OneWireConfig
	SPI     []SPIConfig
}

// electrical maps a logical level to the wire.
func electrical(l Level, activeLow bool) Level { return l != Level(activeLow) }

// electricalEdge maps a logical edge kind to the wire: on an active-low pin,
// becoming active (rising) is a falling edge.
func electricalEdge(e Edge, activeLow bool) Edge {
	if !activeLow {
		return e
	}
	switch e {
	case EdgeRising:
		return EdgeFalling
	case EdgeFalling:
		return EdgeRising
	}
	return e
}
