package mqtt

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// SensorWatch is an Entity.Watch that runs line through r as caller mqtt
// every interval and publishes the number it returns: the result field named
// field, or with field "" the result's text. A read that fails or returns no
// number is logged (once per run of failures) and skipped; the last good
// value stays published.
func SensorWatch(r *tools.Runner, line, field string, every time.Duration, log *slog.Logger) func(ctx context.Context, publish func(string)) error {
	return func(ctx context.Context, publish func(string)) error {
		t := time.NewTicker(every)
		defer t.Stop()
		failing := false
		for {
			v, err := readNumber(ctx, r, line, field)
			switch {
			case err == nil:
				failing = false
				publish(strconv.FormatFloat(v, 'f', -1, 64))
			case ctx.Err() != nil:
				return ctx.Err()
			case !failing:
				failing = true
				log.Warn("mqtt: reading a sensor failed; retrying at its interval", "command", line, "err", err)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}
}

func readNumber(ctx context.Context, r *tools.Runner, line, field string) (float64, error) {
	rep, err := channels.Run(ctx, r, Caller, line)
	if err != nil {
		return 0, err
	}
	var res tools.Result
	for _, st := range rep.Stages {
		for _, c := range st.Calls {
			res = c.Result
		}
	}
	if field != "" {
		v, ok := res.Fields[field]
		if !ok {
			return 0, fmt.Errorf("%s: the result has no field %q", line, field)
		}
		switch v.Kind {
		case grammar.Int:
			return float64(v.Int), nil
		case grammar.Float:
			return v.Float, nil
		}
		return 0, fmt.Errorf("%s: field %q is a %s, not a number", line, field, v.Kind)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(res.Text), 64)
	if err != nil {
		return 0, fmt.Errorf("%s: the result %.40q is not a number (name a result field with field:)", line, res.Text)
	}
	return v, nil
}
