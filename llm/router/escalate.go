package router

import "context"

// Escalate is how the agent tells the router that an answer was not good
// enough, for the calls it makes with the returned context: a local reply
// that still failed validation after a repair attempt, the same tool error
// again, an answer the caller judged insufficient (the Cascade strategy's
// escalation). from is the provider that gave that answer (its
// Final.Provider) and reason says why, for the route.
//
// With it, the router passes over from and every provider ordered before
// it by the strategy, which for LocalFirst, Fallback and Cascade means the
// next step up: remote after local, the next in the fallback order, the
// next dearer model. Escalations compose: the furthest one applies. When no
// provider that could take the call comes after from, the hint is ignored
// (and the route says so) rather than the call failing: a board with only
// a local model keeps answering.
//
// The hint lives in the context, so it lasts as long as the agent keeps
// using that context: typically the rest of the turn.
func Escalate(ctx context.Context, from, reason string) context.Context {
	return context.WithValue(ctx, escalationKey{}, &escalation{from: from, reason: reason, prev: escalationOf(ctx)})
}

type escalationKey struct{}

type escalation struct {
	from, reason string
	prev         *escalation
}

func escalationOf(ctx context.Context) *escalation {
	x, _ := ctx.Value(escalationKey{}).(*escalation)
	return x
}
