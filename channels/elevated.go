package channels

import (
	"fmt"
	"strings"
	"time"
)

// Elevator opens an owner's /elevated window (policy.Policy.Elevate).
type Elevator interface {
	Elevate(user string, d time.Duration) (time.Time, error)
}

// elevated answers "/elevated 10m": the tools listed in policy.elevated may
// then run for this owner until the window closes.
func (d *Dispatcher) elevated(msg Message, arg string) Response {
	dur, err := time.ParseDuration(strings.TrimSpace(arg))
	if err != nil {
		return Response{Text: "error: /elevated takes a duration, such as /elevated 10m", Failed: true}
	}
	until, err := d.Elevation.Elevate(msg.User, dur)
	if err != nil {
		return Response{Text: "error: " + err.Error(), Failed: true}
	}
	return Response{Text: fmt.Sprintf("Elevated until %s: the tools in policy.elevated may run for you.", until.Format("15:04:05"))}
}
