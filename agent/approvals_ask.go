package agent

import "context"

// Ask waits for a person to decide p, for a caller that is not the agent (an
// MCP host's call): it is announced like the agent's requests (Notify), decided
// by `approve ID` / `deny ID` on a console or the control socket, and Expired at
// p.Deadline or when ctx ends. p.ID is set here.
func (a *Approvals) Ask(ctx context.Context, p Pending) (Decision, error) {
	return a.wait(ctx, &p, nil, nil, nil)
}
