package tools

// This file: the one rule for what a read says. Automations' read triggers
// poll a command and fire when its number is above or below a threshold; a
// goal's success check and its plan's waits read a command and hold when its
// level or number is as asked. Both take the number of a result the same way
// and compare it the same way, here.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/clawedge/clawedge/grammar"
)

// Number is the number a read's result stands for: its field "value", else
// its first numeric field by name, else its text.
func (r Result) Number() (float64, error) {
	num := func(v grammar.Value) (float64, bool) {
		switch v.Kind {
		case grammar.Int:
			return float64(v.Int), true
		case grammar.Float:
			return v.Float, true
		}
		return 0, false
	}
	if v, ok := num(r.Fields["value"]); ok {
		return v, nil
	}
	keys := make([]string, 0, len(r.Fields))
	for k := range r.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if v, ok := num(r.Fields[k]); ok {
			return v, nil
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(r.Text), 64)
	if err != nil || math.IsNaN(v) {
		text := r.Text
		if len(text) > 40 {
			text = text[:40] + "..."
		}
		return 0, fmt.Errorf("the result %q has no number", text)
	}
	return v, nil
}

// Threshold is a band a number may leave: above Above or below Below (either
// may be nil).
type Threshold struct {
	Above *float64 `json:"above,omitempty"`
	Below *float64 `json:"below,omitempty"`
}

// Beyond reports whether v is above Above or below Below.
func (t Threshold) Beyond(v float64) bool {
	return t.Above != nil && v > *t.Above || t.Below != nil && v < *t.Below
}

// Back reports whether v has come back inside the band by hysteresis.
func (t Threshold) Back(v, hysteresis float64) bool {
	return (t.Above == nil || v <= *t.Above-hysteresis) && (t.Below == nil || v >= *t.Below+hysteresis)
}

// Condition is what a read must say: a level (Is "high": the number is not
// 0; "low": it is 0), a threshold crossed (Above or Below alone), or a range
// (Above and Below with Between: the number is inside them). An empty
// Condition always holds.
type Condition struct {
	Is string `json:"is,omitempty"` // "high" | "low" | ""
	Threshold
	// Between: hold while the number is within [Below, Above] rather than
	// beyond it.
	Between bool `json:"between,omitempty"`
}

// Holds reports whether v satisfies c.
func (c Condition) Holds(v float64) bool {
	switch c.Is {
	case "high":
		if v == 0 {
			return false
		}
	case "low":
		if v != 0 {
			return false
		}
	}
	if c.Between {
		return !c.Threshold.Beyond(v)
	}
	return (c.Above == nil || v > *c.Above) && (c.Below == nil || v < *c.Below)
}

// String is the condition as it is written after a read: "is high",
// "above 24", "below 18", "between 18 and 24".
func (c Condition) String() string {
	var parts []string
	if c.Is != "" {
		parts = append(parts, "is "+c.Is)
	}
	switch {
	case c.Between:
		parts = append(parts, "between "+grammar.FormatNumber(*c.Below)+" and "+grammar.FormatNumber(*c.Above))
	case c.Above != nil:
		parts = append(parts, "above "+grammar.FormatNumber(*c.Above))
	case c.Below != nil:
		parts = append(parts, "below "+grammar.FormatNumber(*c.Below))
	}
	return strings.Join(parts, " and ")
}

// ReadCheck is a read in the command language and the condition its number
// must meet: `@gpio/read{pin="led"} is high`, `@sensor/temp{} above 24`,
// `@sensor/temp{} between 18 and 24`.
type ReadCheck struct {
	Read string `json:"read"` // one invocation, as rendered by CommandText
	Condition
}

func (c ReadCheck) String() string { return c.Read + " " + c.Condition.String() }

// ParseReadCheck reads a check as a person writes it: one invocation, then
// "is high|low", "above N", "below N" or "between N and M". Errors say what
// is wrong and where.
func ParseReadCheck(text string) (ReadCheck, error) {
	text = strings.TrimSpace(text)
	end := strings.LastIndex(text, "}")
	if !strings.HasPrefix(text, "@") || end < 0 {
		return ReadCheck{}, errors.New(`a check is a read and a condition, such as @gpio/read{pin="led"} is high, or @sensor/temp{} above 24`)
	}
	cmd, err := grammar.Parse(text[:end+1], grammar.ParseOptions{})
	if err != nil {
		return ReadCheck{}, fmt.Errorf("the check's read: %w", err)
	}
	if len(cmd.Stages) != 1 || len(cmd.Stages[0].Calls) != 1 {
		return ReadCheck{}, errors.New("the check's read must be one invocation, not a chain or a parallel block")
	}
	inv := cmd.Stages[0].Calls[0]
	for _, p := range inv.Params {
		if hasRef(p.Value) {
			return ReadCheck{}, fmt.Errorf("the check's read: %s: references ($prev, $ctx, ...) are not allowed in a check", p.Key)
		}
	}
	cond, err := ParseCondition(text[end+1:])
	if err != nil {
		return ReadCheck{}, fmt.Errorf("the check's condition (after column %d): %w", end+2, err)
	}
	return ReadCheck{Read: CommandText(inv.Tool(), inv.Params), Condition: cond}, nil
}

func hasRef(v grammar.Value) bool {
	if v.Kind == grammar.Ref {
		return true
	}
	for _, it := range v.Items {
		if hasRef(it) {
			return true
		}
	}
	return false
}

// ParseCondition reads "is high", "is low", "above N", "below N" or
// "between N and M".
func ParseCondition(s string) (Condition, error) {
	f := strings.Fields(strings.ToLower(s))
	num := func(w string) (*float64, error) {
		v, err := strconv.ParseFloat(w, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a number", w)
		}
		return &v, nil
	}
	switch {
	case len(f) == 2 && f[0] == "is" && (f[1] == "high" || f[1] == "low"):
		return Condition{Is: f[1]}, nil
	case len(f) == 2 && f[0] == "above":
		v, err := num(f[1])
		return Condition{Threshold: Threshold{Above: v}}, err
	case len(f) == 2 && f[0] == "below":
		v, err := num(f[1])
		return Condition{Threshold: Threshold{Below: v}}, err
	case len(f) == 4 && f[0] == "between" && f[2] == "and":
		lo, err := num(f[1])
		if err != nil {
			return Condition{}, err
		}
		hi, err := num(f[3])
		if err != nil {
			return Condition{}, err
		}
		if *lo > *hi {
			return Condition{}, fmt.Errorf("between %s and %s: the first is above the second", f[1], f[3])
		}
		return Condition{Threshold: Threshold{Above: hi, Below: lo}, Between: true}, nil
	}
	return Condition{}, fmt.Errorf("%q: want is high, is low, above N, below N or between N and M", strings.TrimSpace(s))
}

// Check runs the check's read on the call path for caller (audited like any
// read) and says whether its condition holds, with the number read.
func (r *Runner) Check(ctx context.Context, caller Caller, c ReadCheck) (holds bool, value float64, err error) {
	cmd, err := grammar.Parse(c.Read, grammar.ParseOptions{Namespaces: r.Registry.Namespaces()})
	if err != nil {
		return false, 0, err
	}
	rep, err := r.Run(ctx, caller, cmd)
	if err != nil {
		return false, 0, err
	}
	if len(rep.Stages) == 0 || len(rep.Stages[0].Calls) == 0 {
		return false, 0, errors.New("the read gave no result")
	}
	v, err := rep.Stages[0].Calls[0].Result.Number()
	if err != nil {
		return false, 0, err
	}
	return c.Holds(v), v, nil
}
