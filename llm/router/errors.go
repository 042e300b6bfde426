package router

import (
	"errors"
	"strings"

	"github.com/clawedge/clawedge/llm"
)

// Error is the router's failure when no provider could answer: each one,
// in the order tried, with why. errors.Is finds each provider's error in
// it, and always llm.ErrUnavailable or llm.ErrCapacity.
type Error struct {
	Attempts []Attempt
}

// Attempt is one provider passed over or failed.
type Attempt struct {
	Provider string
	Err      error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("router: no model could answer: ")
	for i, a := range e.Attempts {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(a.Provider)
		b.WriteString(": ")
		b.WriteString(oneLine(a.Err.Error()))
	}
	return b.String()
}

// Unwrap returns each attempt's error, and llm.ErrUnavailable when none of
// them is a capacity problem or an outage (a Fallback strategy going past
// an authentication error, say), so that callers can always tell a router
// failure with errors.Is.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, len(e.Attempts)+1)
	known := false
	for _, a := range e.Attempts {
		errs = append(errs, a.Err)
		known = known || errors.Is(a.Err, llm.ErrCapacity) || errors.Is(a.Err, llm.ErrUnavailable)
	}
	if !known {
		errs = append(errs, llm.ErrUnavailable)
	}
	return errs
}
