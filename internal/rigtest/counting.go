package rigtest

import (
	"context"
	"sync/atomic"

	"github.com/clawedge/clawedge/tools"
)

// CountingAuthorizer counts the calls that reach the authorizer and lets
// Inner decide them: the door walks (daemon, channels/web) hold each door to
// reaching it, or to not reaching it.
type CountingAuthorizer struct {
	Inner tools.Authorizer
	n     atomic.Int64
}

// Authorize counts the call and asks Inner.
func (c *CountingAuthorizer) Authorize(ctx context.Context, caller tools.Caller, call tools.Call) (string, error) {
	c.n.Add(1)
	return c.Inner.Authorize(ctx, caller, call)
}

// Count is how many calls reached it.
func (c *CountingAuthorizer) Count() int64 { return c.n.Load() }
