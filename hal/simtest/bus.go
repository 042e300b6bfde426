package simtest

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/clawedge/clawedge/hal"
)

// RegisterBus is an I²C bus of register-map devices, the way most sensors
// work: the first byte written is a register pointer, the bytes after it are
// written from that register on, and a read returns registers from the
// pointer on; the pointer auto-increments (wrapping at 256) and persists
// between transactions. An address with no device fails like a NACK.
// It is safe for concurrent use.
type RegisterBus struct {
	mu      sync.Mutex
	devices map[uint16]*registerDevice
	log     []string
	closed  bool
}

type registerDevice struct {
	regs [256]byte
	ptr  byte
}

// NewRegisterBus returns a bus with a device at each address of devices,
// holding those register values.
func NewRegisterBus(devices map[uint16][256]byte) *RegisterBus {
	b := &RegisterBus{devices: make(map[uint16]*registerDevice, len(devices))}
	for addr, regs := range devices {
		b.devices[addr] = &registerDevice{regs: regs}
	}
	return b
}

var _ hal.Bus = (*RegisterBus)(nil)

func (b *RegisterBus) Tx(addr uint16, w, r []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("simtest: I²C bus closed")
	}
	b.log = append(b.log, fmt.Sprintf("%#02x w=% x r=%d", addr, w, len(r)))
	dev, ok := b.devices[addr]
	if !ok {
		return fmt.Errorf("simtest: no device at address %#02x (NACK)", addr)
	}
	if len(w) > 0 {
		dev.ptr = w[0]
		for _, v := range w[1:] {
			dev.regs[dev.ptr] = v
			dev.ptr++
		}
	}
	for i := range r {
		r[i] = dev.regs[dev.ptr]
		dev.ptr++
	}
	return nil
}

// Close makes later transactions fail.
func (b *RegisterBus) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

// Registers returns the registers of the device at addr (zero if there is none).
func (b *RegisterBus) Registers(addr uint16) [256]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if dev, ok := b.devices[addr]; ok {
		return dev.regs
	}
	return [256]byte{}
}

// SetRegister changes a register, as the device itself would (a new reading).
func (b *RegisterBus) SetRegister(addr uint16, reg, v byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if dev, ok := b.devices[addr]; ok {
		dev.regs[reg] = v
	}
}

// Transactions returns every transaction so far as "0x48 w=00 r=2".
func (b *RegisterBus) Transactions() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.log...)
}

// String lists the device addresses: "simtest I²C bus (0x48, 0x76)".
func (b *RegisterBus) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	addrs := make([]string, 0, len(b.devices))
	keys := make([]int, 0, len(b.devices))
	for a := range b.devices {
		keys = append(keys, int(a))
	}
	sort.Ints(keys)
	for _, a := range keys {
		addrs = append(addrs, fmt.Sprintf("%#02x", a))
	}
	return "simtest I²C bus (" + strings.Join(addrs, ", ") + ")"
}
