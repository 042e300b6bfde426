package hal

import (
	"context"
	"fmt"
	"sync"
)

// BusHandle is a configured I²C bus. Like a Port it opens on first use, lets
// one caller at a time hold it, and reopens after a failed transaction (a USB
// I²C adapter can come and go; reopening /dev/i2c-N is cheap).
type BusHandle struct {
	b   *Board
	cfg BusConfig
	sem chan struct{}

	mu     sync.Mutex
	bus    Bus
	closed bool
}

func newBusHandle(b *Board, cfg BusConfig) *BusHandle {
	return &BusHandle{b: b, cfg: cfg, sem: make(chan struct{}, 1)}
}

func (h *BusHandle) Name() string { return h.cfg.Name }

// Device is the bus as configured: "1" or "/dev/i2c-1".
func (h *BusHandle) Device() string { return h.cfg.Bus }

// String is "sensors (I²C 1)".
func (h *BusHandle) String() string { return fmt.Sprintf("%s (I²C %s)", h.cfg.Name, h.cfg.Bus) }

// Tx does one transaction: write w, then read into r, at addr.
func (h *BusHandle) Tx(ctx context.Context, addr uint16, w, r []byte) error {
	return h.Do(ctx, func(bus Bus) error {
		if err := bus.Tx(addr, w, r); err != nil {
			return fmt.Errorf("address %#02x: %w", addr, err)
		}
		return nil
	})
}

// Do holds the bus for the whole of fn, for transactions that must not be
// interleaved with another caller's. Errors name the bus.
func (h *BusHandle) Do(ctx context.Context, fn func(bus Bus) error) error {
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return h.wrap(ctx.Err())
	}
	defer func() { <-h.sem }()
	if err := ctx.Err(); err != nil {
		return h.wrap(err)
	}
	bus, err := h.get()
	if err != nil {
		return err
	}
	if err := fn(bus); err != nil {
		h.drop(bus)
		return h.wrap(err)
	}
	return nil
}

func (h *BusHandle) wrap(err error) error {
	return fmt.Errorf("bus %q (I²C %s): %w", h.cfg.Name, h.cfg.Bus, err)
}

func (h *BusHandle) get() (Bus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, h.wrap(fmt.Errorf("the board is closed"))
	}
	if h.bus != nil {
		return h.bus, nil
	}
	bus, err := h.b.drv.OpenBus(h.cfg.Bus)
	if err != nil {
		return nil, h.wrap(err)
	}
	h.bus = bus
	return bus, nil
}

func (h *BusHandle) drop(bus Bus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.bus == bus {
		h.bus = nil
		bus.Close()
	}
}

func (h *BusHandle) close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.bus == nil {
		return nil
	}
	err := h.bus.Close()
	h.bus = nil
	if err != nil {
		return h.wrap(fmt.Errorf("closing: %w", err))
	}
	return nil
}
