package goals

// This file: what people read about goals: the report its owner is sent
// when it ends, `goal show` (the plan with each step's state, the
// evaluations, the budget spent) and `goal list`.

import (
	"fmt"
	"strings"
	"time"
)

// Report is what the owner is told when goal g ends: how, and what was done.
func Report(g Goal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goal %s %s: %s", g.ID, g.State, oneLine(g.Objective, 120))
	if g.Reason != "" {
		fmt.Fprintf(&b, " — %s", g.Reason)
	}
	done := 0
	for _, s := range g.Steps {
		if s.State == StepDone {
			done++
		}
	}
	fmt.Fprintf(&b, "\n%d of %d steps done; %s, %d model tokens", done, len(g.Steps), actions(&g), g.Spent.Tokens)
	if h := g.Hold; h != nil {
		fmt.Fprintf(&b, "\nthe band %s: %s", g.Check.Condition, h.figures())
	}
	// Every step that did something or failed, the newest last; a night
	// of a holding goal is bounded to the newest maxReported.
	var shown []Step
	for _, s := range g.Steps {
		if s.State == StepDone || s.State == StepFailed || s.State == Blocked {
			shown = append(shown, s)
		}
	}
	if n := len(shown); n > maxReported {
		fmt.Fprintf(&b, "\n  (%d earlier steps)", n-maxReported)
		shown = shown[n-maxReported:]
	}
	for _, s := range shown {
		fmt.Fprintf(&b, "\n  %d %s %s", s.ID, s.State, s.Command)
		if !s.Ended.IsZero() && g.Hold != nil {
			fmt.Fprintf(&b, " at %s", s.Ended.Format("15:04"))
		}
		if s.Result != "" {
			fmt.Fprintf(&b, ": %s", oneLine(s.Result, 100))
		}
	}
	return b.String()
}

// maxReported bounds the steps a report lists.
const maxReported = 20

// Show is `goal show`: the goal, its plan step by step, its evaluations and
// what it spent.
func Show(g Goal) string {
	var b strings.Builder
	fmt.Fprintf(&b, "goal %s: %s\n", g.ID, g.Objective)
	fmt.Fprintf(&b, "owner %s; %s", g.Owner, g.State)
	if g.Reason != "" {
		fmt.Fprintf(&b, " (%s)", g.Reason)
	}
	b.WriteByte('\n')
	switch {
	case g.Check != nil && g.Hold != nil:
		fmt.Fprintf(&b, "holds %s until its deadline\n", g.Check)
	case g.Check != nil:
		fmt.Fprintf(&b, "until %s\n", g.Check)
	}
	if !g.Deadline.IsZero() {
		fmt.Fprintf(&b, "deadline %s", g.Deadline.Format(time.RFC3339))
		if g.DeadlineAsSet != "" {
			fmt.Fprintf(&b, " (%s)", g.DeadlineAsSet)
		}
		b.WriteByte('\n')
	}
	if rd := g.Reading; rd != nil && g.Check != nil {
		if rd.Err != "" {
			fmt.Fprintf(&b, "last reading %s: the read failed: %s\n", rd.At.Format(time.RFC3339), oneLine(rd.Err, 120))
		} else {
			fmt.Fprintf(&b, "last reading %s: %s (%s)\n", rd.At.Format(time.RFC3339), says(g.Check.Condition, rd.Value), map[bool]string{true: "holds", false: "does not hold"}[rd.Holds])
		}
	}
	if g.State == Awaiting {
		fmt.Fprintf(&b, "waiting since %s", g.WaitingSince.Format(time.RFC3339))
		if !g.Next.IsZero() {
			fmt.Fprintf(&b, "; judged next by %s", g.Next.Format(time.RFC3339))
		}
		switch g.Watched {
		case "events":
			b.WriteString(", and at each change of the reading")
		case "poll":
			b.WriteString(", and when a poll finds the reading changed")
		}
		b.WriteByte('\n')
	}
	if h := g.Hold; h != nil {
		fmt.Fprintf(&b, "band since %s: %s", h.Since.Format(time.RFC3339), h.figures())
		if !h.OutSince.IsZero() && !g.State.Finished() {
			fmt.Fprintf(&b, "; out (%s) since %s", h.Side, h.OutSince.Format(time.RFC3339))
		}
		b.WriteByte('\n')
	}
	if g.Parent != "" {
		fmt.Fprintf(&b, "sub-goal of %s\n", g.Parent)
	}
	b.WriteString("plan:\n")
	if len(g.Steps) == 0 {
		b.WriteString("  (none yet)\n")
	}
	for _, s := range g.Steps {
		fmt.Fprintf(&b, "  %d. [%s", s.ID, s.State)
		if s.Waiting != "" {
			fmt.Fprintf(&b, ": %s", s.Waiting)
		}
		fmt.Fprintf(&b, "] %s", s.Command)
		if len(s.After) > 0 {
			fmt.Fprintf(&b, " (after %s)", joinInts(s.After))
		}
		if s.Result != "" {
			fmt.Fprintf(&b, " -> %s", oneLine(s.Result, 120))
		}
		b.WriteByte('\n')
	}
	if len(g.Evaluations) > 0 {
		b.WriteString("evaluations:\n")
		for _, e := range g.Evaluations {
			fmt.Fprintf(&b, "  %s %3.0f%% by %s: %s\n", e.At.Format("15:04:05"), e.Score*100, e.By, oneLine(e.Reason, 120))
		}
	}
	switch {
	case g.Parent != "":
		// Its budget is its root's: what it spent is its share.
		fmt.Fprintf(&b, "spent: %d plans, %d steps, %d model tokens, %d approvals, %d reads, of goal %s's budget",
			g.Spent.Plans, g.Spent.Steps, g.Spent.Tokens, g.Spent.Approvals, g.Spent.Reads, rootOf(g.ID))
	case g.Tree != nil && *g.Tree != g.Spent:
		fmt.Fprintf(&b, "spent: %d plans, %d steps, %d model tokens, %d approvals, %d reads itself\n", g.Spent.Plans, g.Spent.Steps, g.Spent.Tokens, g.Spent.Approvals, g.Spent.Reads)
		fmt.Fprintf(&b, "with its sub-goals: %s", spent(*g.Tree, g.Budget))
	default:
		fmt.Fprintf(&b, "spent: %s", spent(g.Spent, g.Budget))
	}
	return b.String()
}

// FormatList is `goal list`: one goal a line.
func FormatList(gs []Goal) string {
	if len(gs) == 0 {
		return "no goals"
	}
	var b strings.Builder
	for i, g := range gs {
		if i > 0 {
			b.WriteByte('\n')
		}
		done := 0
		for _, s := range g.Steps {
			if s.State == StepDone {
				done++
			}
		}
		fmt.Fprintf(&b, "%s %s: %s (%d/%d steps; owner %s)", g.ID, g.State, oneLine(g.Objective, 80), done, len(g.Steps), g.Owner)
		if !g.Deadline.IsZero() && !g.State.Finished() {
			fmt.Fprintf(&b, "; until %s", g.Deadline.Format("2006-01-02 15:04"))
		}
	}
	return b.String()
}

// spent is s against the budget b.
func spent(s Spent, b Budget) string {
	return fmt.Sprintf("%d plans, %d steps%s, %d model tokens%s, %d approvals%s, %d reads%s",
		s.Plans, s.Steps, of(b.Steps), s.Tokens, of(b.Tokens), s.Approvals, of(b.Approvals), s.Reads, of(b.Reads))
}

func of(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" of %d", n)
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
