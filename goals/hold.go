package goals

// This file: what a check's number says beyond holds or not. How far it is
// from its threshold (a judgement nearer than before is progress), on which
// side it is out, and, for a holding goal (one whose check must hold until
// its deadline: "keep the greenhouse between 18 and 24 until 07:00"), the
// record of the night: the lowest and highest reads, the time outside the
// band, the excursions and the plans that brought it back.

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Hold is a holding goal's record, kept with the goal.
type Hold struct {
	Since time.Time `json:"since"`
	// Reads counts the check's reads that gave a number; Min and Max are
	// the lowest and highest of them.
	Reads int     `json:"reads"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	// Outside is the time spent outside the band, as the reads saw it: an
	// excursion runs from the first read outside to the first back inside.
	Outside time.Duration `json:"outside"`
	// OutSince is when the excursion going on began (zero: inside); Side
	// where it is out ("below", "above", "low", "high").
	OutSince   time.Time `json:"out_since,omitzero"`
	Side       string    `json:"side,omitempty"`
	Excursions int       `json:"excursions"`
	// Acted says a plan was run for the excursion going on: the next one
	// is a re-plan after a stall, not a reflex.
	Acted bool `json:"acted,omitempty"`
	// Remedies are, by side, the plan that last brought it back from
	// there: run again at the next excursion on that side, without asking
	// the model (no tokens, not one of max_plans).
	Remedies map[string]string `json:"remedies,omitempty"`
	// Reused counts the plans run again from Remedies.
	Reused int `json:"reused"`
}

// distance is how far v is from making c hold, and whether c has a number
// to be near to (a level has not: it holds or it does not).
func distance(c tools.Condition, v float64) (float64, bool) {
	switch {
	case c.Is != "" || c.Above == nil && c.Below == nil:
		return 0, false
	case c.Between:
		return max(*c.Below-v, v-*c.Above, 0), true
	case c.Above != nil:
		return max(*c.Above-v, 0), true
	default:
		return max(v-*c.Below, 0), true
	}
}

// side is where v is when c does not hold: "below" or "above" a number,
// "low" or "high" for a level.
func side(c tools.Condition, v float64) string {
	switch {
	case c.Is == "high" && v == 0:
		return "low"
	case c.Is == "low" && v != 0:
		return "high"
	case c.Between && v < *c.Below, !c.Between && c.Above != nil:
		return "below"
	case c.Between && v > *c.Above, !c.Between && c.Below != nil:
		return "above"
	}
	return "outside"
}

// A hold's move at one reading.
type holdMove int

const (
	holdSame    holdMove = iota
	holdOut              // it left the band
	holdBack             // it came back into the band
	holdFlipped          // out on the other side now
)

// observe takes one reading into h and says how the band moved.
func (h *Hold) observe(r Reading, c tools.Condition) holdMove {
	if r.Err != "" {
		return holdSame
	}
	if h.Reads == 0 || r.Value < h.Min {
		h.Min = r.Value
	}
	if h.Reads == 0 || r.Value > h.Max {
		h.Max = r.Value
	}
	h.Reads++
	out := !h.OutSince.IsZero()
	switch {
	case r.Holds && out:
		h.Outside += r.At.Sub(h.OutSince)
		h.OutSince, h.Side, h.Acted = time.Time{}, "", false
		return holdBack
	case !r.Holds && !out:
		h.OutSince, h.Side, h.Acted = r.At, side(c, r.Value), false
		h.Excursions++
		return holdOut
	case !r.Holds && side(c, r.Value) != h.Side:
		// The same excursion, out on the other side: what was done was for
		// the other side, so it is acted on anew.
		h.Side, h.Acted = side(c, r.Value), false
		return holdFlipped
	}
	return holdSame
}

// close ends the record at the deadline: an excursion going on counts to
// then.
func (h *Hold) close(at time.Time) {
	if !h.OutSince.IsZero() && at.After(h.OutSince) {
		h.Outside += at.Sub(h.OutSince)
		h.OutSince = at
	}
}

// figures are the record in words: "min 17.2, max 24.3 in 432 reads;
// outside the band 14m in 3 excursions".
func (h *Hold) figures() string {
	if h.Reads == 0 {
		return "no read of the check gave a number"
	}
	out := "never outside the band"
	if h.Excursions > 0 {
		out = fmt.Sprintf("outside the band %s in %s", human(h.Outside), plural(h.Excursions, "excursion"))
	}
	return fmt.Sprintf("min %s, max %s in %s; %s", grammar.FormatNumber(h.Min), grammar.FormatNumber(h.Max), plural(h.Reads, "read"), out)
}

// actions are what a goal did, in words: "1 plan, 1 call"; a holding
// goal's "2 plans, 3 run again, 6 calls".
func actions(g *Goal) string {
	s := plural(g.Spent.Plans, "plan")
	if g.Hold != nil && g.Hold.Reused > 0 {
		s += fmt.Sprintf(", %d run again", g.Hold.Reused)
	}
	return s + ", " + plural(calls(g), "call")
}

// calls counts g's call steps that were started.
func calls(g *Goal) int {
	n := 0
	for _, s := range g.Steps {
		if s.Kind == KindCall && !s.Started.IsZero() {
			n++
		}
	}
	return n
}

// callsDone counts the call steps of g's current plan that are done: a plan
// that did nothing did not bring anything back.
func callsDone(g *Goal) int {
	n := 0
	for _, s := range g.Steps {
		if s.ID >= g.PlanFrom && s.Kind == KindCall && s.State == StepDone {
			n++
		}
	}
	return n
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// human is a duration as a person writes it: "5m", "1h30m", "20s".
func human(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// subject is what a check reads, named as a person would: its read's one
// text argument ("the door" for @gpio/read{pin="door"}), else the read.
func subject(read string) string {
	cmd, err := grammar.Parse(read, grammar.ParseOptions{})
	if err == nil && len(cmd.Stages) == 1 && len(cmd.Stages[0].Calls) == 1 {
		var texts []string
		for _, p := range cmd.Stages[0].Calls[0].Params {
			if p.Value.Kind == grammar.String {
				texts = append(texts, p.Value.Str)
			}
		}
		if len(texts) == 1 && texts[0] != "" {
			return "the " + texts[0]
		}
	}
	return read
}

// says is what a reading says in words: a level as "low" or "high", a
// number as itself.
func says(c tools.Condition, v float64) string {
	if c.Is != "" {
		if v == 0 {
			return "low"
		}
		return "high"
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	return grammar.FormatNumber(v)
}

// Says is what a reading of check said, in words ("high", "21.5"), or why
// the read failed: goal show's and the dashboard's.
func (rd Reading) Says(check tools.ReadCheck) string {
	if rd.Err != "" {
		return "the read failed: " + oneLine(rd.Err, 120)
	}
	return says(check.Condition, rd.Value)
}
