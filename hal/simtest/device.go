// Package simtest has fakes for the hal interfaces, like periph's gpiotest:
// a scripted serial device (a hal.PortConn) and a register-map I²C bus (a
// hal.Bus). Attach them to a sim.Sim, or use them directly.
package simtest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/hal"
)

// ErrClosed is returned by a ScriptedDevice used after Close.
var ErrClosed = errors.New("simtest: device closed")

// Unknown is the script key whose response answers any line the script does
// not list. Without it, unknown lines get no answer.
const Unknown = "*"

// ScriptedDevice is a serial device that answers lines, like an Arduino
// sketch: each line written to it (ended by "\n"; a "\r" before it is dropped)
// that the script lists queues the response, followed by "\r\n", for reading.
// An empty response means no answer. Reads behave like a real port's:
// after SetReadTimeout(d), Read returns (0, nil) when nothing arrived within
// d; 0 polls; hal.NoTimeout blocks. It records everything written.
// It is safe for concurrent use.
type ScriptedDevice struct {
	mu       sync.Mutex
	script   map[string]string
	latency  time.Duration
	timeout  time.Duration
	pending  []byte // written, not yet a complete line
	written  []byte
	lines    []string
	out      []byte        // queued for reading
	arrived  chan struct{} // closed when out grows or the device closes; made only while a reader waits
	failNext error
	closed   bool
}

// NewScriptedDevice returns a device answering by script: request line →
// response (the key Unknown answers anything else).
func NewScriptedDevice(script map[string]string) *ScriptedDevice {
	d := &ScriptedDevice{script: make(map[string]string, len(script)), timeout: hal.NoTimeout}
	for k, v := range script {
		d.script[k] = v
	}
	return d
}

var _ hal.PortConn = (*ScriptedDevice)(nil)

// SetResponse adds or changes one line of the script.
func (d *ScriptedDevice) SetResponse(request, response string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.script[request] = response
}

// SetLatency delays every answer by l, as a slow device would.
func (d *ScriptedDevice) SetLatency(l time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.latency = l
}

// Send makes the device emit s unprompted (a sensor streaming readings).
func (d *ScriptedDevice) Send(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queueLocked([]byte(s))
}

// FailNext makes the next Read or Write return err, once: a glitch, or an
// adapter pulled out.
func (d *ScriptedDevice) FailNext(err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.failNext = err
}

// Written returns every byte written so far.
func (d *ScriptedDevice) Written() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return string(d.written)
}

// Lines returns the complete lines received so far, without line endings.
func (d *ScriptedDevice) Lines() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.lines...)
}

// Buffered returns how many bytes wait to be read.
func (d *ScriptedDevice) Buffered() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.out)
}

func (d *ScriptedDevice) SetReadTimeout(t time.Duration) error {
	if t < 0 && t != hal.NoTimeout {
		return fmt.Errorf("simtest: read timeout %v is negative", t)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timeout = t
	return nil
}

func (d *ScriptedDevice) Read(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.takeFailure(); err != nil {
		return 0, err
	}
	var expired <-chan time.Time
	if d.timeout > 0 {
		t := time.NewTimer(d.timeout)
		defer t.Stop()
		expired = t.C
	}
	for len(d.out) == 0 {
		if d.closed {
			return 0, ErrClosed
		}
		if d.timeout == 0 || len(p) == 0 {
			return 0, nil
		}
		if d.arrived == nil {
			d.arrived = make(chan struct{})
		}
		arrived := d.arrived
		d.mu.Unlock()
		select {
		case <-arrived:
			d.mu.Lock()
		case <-expired:
			d.mu.Lock()
			if len(d.out) == 0 {
				return 0, nil
			}
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

func (d *ScriptedDevice) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.takeFailure(); err != nil {
		return 0, err
	}
	if d.closed {
		return 0, ErrClosed
	}
	d.written = append(d.written, p...)
	d.pending = append(d.pending, p...)
	for {
		i := strings.IndexByte(string(d.pending), '\n')
		if i < 0 {
			break
		}
		line := strings.TrimSuffix(string(d.pending[:i]), "\r")
		d.pending = d.pending[i+1:]
		d.lines = append(d.lines, line)
		resp, ok := d.script[line]
		if !ok {
			resp = d.script[Unknown]
		}
		if resp == "" {
			continue
		}
		answer := []byte(resp + "\r\n")
		if d.latency <= 0 {
			d.queueLocked(answer)
			continue
		}
		time.AfterFunc(d.latency, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.queueLocked(answer)
		})
	}
	return len(p), nil
}

// Close wakes a blocked Read; later reads and writes fail with ErrClosed.
func (d *ScriptedDevice) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	d.wakeLocked()
	return nil
}

func (d *ScriptedDevice) takeFailure() error {
	err := d.failNext
	d.failNext = nil
	return err
}

func (d *ScriptedDevice) queueLocked(b []byte) {
	if d.closed {
		return
	}
	d.out = append(d.out, b...)
	d.wakeLocked()
}

func (d *ScriptedDevice) wakeLocked() {
	if d.arrived != nil {
		close(d.arrived)
		d.arrived = nil
	}
}
