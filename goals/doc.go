// Package goals pursues objectives over time for the principal that set
// them (docs/goals.md): "keep the led on until the soil sensor reads high".
//
// The model writes a plan in the command language under a constraint
// compiled from exactly the tools the owner's model may be offered plus the
// plan's own words (goal/wait, goal/until, goal/ask, goal/sub), so even a
// tiny local model writes only plans ParsePlan accepts. Each step moves
// through explicit states (planned, ready, running, waiting, done, failed,
// blocked, cancelled), every move saved in the store before what it
// announces: after a crash a running step is failed, never repeated, and
// waits resume. Calls go through tools.Runner.Call as the goal, for its
// owner, so the policy decides and asks as it would for the owner's model.
// A judge (the goal's read check, else a model) scores the goal after each
// step, at intervals and at each change of what its check reads; a plan
// over with the goal not reached waits for the world (state waiting)
// rather than being written again. No progress (a number nearer its
// threshold, a level that changed, a better score) is a stall, which
// re-plans once, then escalates, then goes to the owner; a holding goal
// keeps its check until its deadline, running again the plan that brought
// it back. A deadline or a spent budget ends the goal, and the owner is
// told how it ended and what the check last read. A goal and its
// sub-goals spend one budget, the root's, from one ledger kept in the
// root's record; sub-goals go at most MaxDepth deep, and the goals alive
// are bounded per owner and in all. A check (the
// goal's until, a goal/until step's read) is only ever a read
// (tools.WithoutEffects), never asks a person, and each read is charged.
//
// One job a file: goal.go (the records and their state tables), plan.go
// (plans and their constraint), runtime.go (loading, recovery, adding,
// cancelling), pursue.go (the rounds of one goal, waiting for the world),
// step.go (doing one step), evaluate.go (the judge, stalls, the deadline),
// hold.go (distances to a threshold, a holding goal's record), watch.go
// (the Source of changes and the daemon's Feed), clock.go (the time and its
// timers), model.go (the model calls), report.go (what people read),
// store.go (the records in the store), tools.go (the goal/* tools).
package goals
