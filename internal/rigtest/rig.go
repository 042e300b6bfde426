// Package rigtest is the one call path on real parts, for tests: a bbolt
// store in a temporary folder, the simulated board with the GPIO, serial and
// I²C tools, and a tools.Runner that asks the policy's Authorizer before
// every call, as the daemon wires them.
package rigtest

import (
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// Options say what differs between rigs; the zero value is a board with an
// output "led" (GPIO 17), an output "relay" (22) and an input "button" (27,
// pulled up, both edges), the policy of a config without a policy section
// (a nil Policy), and approvals that wait 30 s.
type Options struct {
	Pins            []hal.PinConfig
	Policy          *policy.Policy
	ApprovalTimeout time.Duration
}

// Rig is what New built; every part is closed when the test ends.
type Rig struct {
	Dir      string // the store's folder
	Store    *store.Store
	Sim      *sim.Sim
	Board    *hal.Board
	Registry *tools.Registry
	Auth     *policy.Authorizer
	Runner   *tools.Runner
}

// DefaultPins are the pins of a rig whose Options name none.
var DefaultPins = []hal.PinConfig{
	{Name: "led", GPIO: 17, Mode: hal.ModeOut},
	{Name: "relay", GPIO: 22, Mode: hal.ModeOut},
	{Name: "button", GPIO: 27, Mode: hal.ModeIn, Pull: hal.PullUp, Edge: hal.EdgeBoth},
}

// New builds a rig for t, failing t when a part does not open.
func New(t testing.TB, opt Options) *Rig {
	t.Helper()
	r := &Rig{Dir: t.TempDir(), Sim: sim.New(), Registry: tools.NewRegistry()}
	var err error
	if r.Store, err = store.Open(r.Dir, store.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Store.Close() })
	pins := opt.Pins
	if pins == nil {
		pins = DefaultPins
	}
	if r.Board, err = hal.Open(r.Sim, hal.Config{Pins: pins}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Board.Close() })
	if err := peripherals.Register(r.Registry, r.Board); err != nil {
		t.Fatal(err)
	}
	timeout := opt.ApprovalTimeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	r.Auth = &policy.Authorizer{Policy: opt.Policy, Approvals: policy.NewApprovals(), Timeout: timeout}
	r.Runner = &tools.Runner{Registry: r.Registry, Audit: r.Store, Authorizer: r.Auth}
	return r
}

// Level reads pin's level, failing t when it cannot.
func (r *Rig) Level(t testing.TB, pin string) hal.Level {
	t.Helper()
	p, err := r.Board.Pin(pin)
	if err != nil {
		t.Fatal(err)
	}
	l, err := p.Read()
	if err != nil {
		t.Fatal(err)
	}
	return l
}
