package daemon

// This file: what the dashboard's goals page reads of the goal runtime
// (channels/web's GoalFacts): the goals as the page shows them, and the
// runtime's change signal, which the page's event stream follows.

import (
	"time"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/goals"
)

type webGoals struct{ rt *goals.Runtime }

func (f webGoals) Changed() <-chan struct{} { return f.rt.Changed() }

func (f webGoals) Goals() []web.Goal {
	gs := f.rt.List()
	out := make([]web.Goal, len(gs))
	for i, g := range gs {
		out[i] = webGoal(g)
	}
	return out
}

// webGoal is g as the page shows it: a root's spending is its tree's (its
// sub-goals' included), the ledger its budget bounds.
func webGoal(g goals.Goal) web.Goal {
	w := web.Goal{ID: g.ID, Objective: g.Objective, Owner: g.Owner.String(), State: string(g.State), Reason: g.Reason,
		Finished: g.State.Finished(), Parent: g.Parent, Deadline: g.Deadline, DeadlineAsSet: g.DeadlineAsSet,
		Created: g.Created, Updated: g.Updated, Hold: g.Hold != nil}
	spent := g.Spent
	if g.Tree != nil {
		spent = *g.Tree
	}
	w.Spent = web.GoalSpent{Plans: spent.Plans, Steps: spent.Steps, Tokens: spent.Tokens, Approvals: spent.Approvals, Reads: spent.Reads}
	if g.Parent == "" {
		w.Budget = web.GoalSpent{Steps: g.Budget.Steps, Tokens: g.Budget.Tokens, Approvals: g.Budget.Approvals, Reads: g.Budget.Reads}
	}
	if g.Check != nil {
		w.Check = g.Check.String()
		if rd := g.Reading; rd != nil {
			w.Reading = &web.GoalReading{At: rd.At, Text: rd.Says(*g.Check), Holds: rd.Holds && rd.Err == ""}
		}
	}
	if g.State == goals.Awaiting {
		w.Waiting = "since " + localTime(g.WaitingSince)
		if !g.Next.IsZero() {
			w.Waiting += "; judged next by " + localTime(g.Next)
		}
		switch g.Watched {
		case "events":
			w.Waiting += ", and at each change of the reading"
		case "poll":
			w.Waiting += ", and when a poll finds the reading changed"
		}
	}
	for _, s := range g.Steps {
		w.Steps = append(w.Steps, web.GoalStep{ID: s.ID, Kind: string(s.Kind), Command: s.Command, State: string(s.State),
			Waiting: s.Waiting, Result: s.Result, Started: s.Started, Ended: s.Ended, Old: s.ID < g.PlanFrom})
		if s.Kind == goals.KindAsk && s.State == goals.Waiting {
			w.Asks = &web.GoalAsking{Step: s.ID, Question: s.Question}
		}
	}
	for _, e := range g.Evaluations {
		w.Evals = append(w.Evals, web.GoalEval{At: e.At, Score: e.Score, By: e.By, Reason: e.Reason})
	}
	return w
}

func localTime(t time.Time) string {
	if t.IsZero() {
		return "(not yet)"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
