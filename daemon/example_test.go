package daemon_test

import (
	"context"
	"fmt"

	"github.com/clawedge/clawedge/daemon"
)

// door is a subsystem that says what becomes of it.
type door struct{ name string }

func (d door) Name() string                { return d.name }
func (d door) Start(context.Context) error { fmt.Println("start", d.name); return nil }
func (d door) Stop(context.Context) error  { fmt.Println("stop", d.name); return nil }

// Run starts the subsystems in their declared order, says ready, and when
// its context ends stops them in the reverse order.
func ExampleRun() {
	ctx, stop := context.WithCancelCause(context.Background())
	err := daemon.Run(ctx, []daemon.Subsystem{door{"store"}, door{"telegram"}, door{"control"}},
		func(names []string) {
			fmt.Println("ready:", names)
			stop(daemon.ErrStopping)
		},
		func() { fmt.Println("stopping") })
	fmt.Println("err:", err)
	// Output:
	// start store
	// start telegram
	// start control
	// ready: [store telegram control]
	// stopping
	// stop control
	// stop telegram
	// stop store
	// err: <nil>
}
