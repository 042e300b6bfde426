package automations

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Effects are what runs can do; cmd/clawedge wires them to the daemon's.
type Effects struct {
	// Runner runs do: lines on the one call path (validate, audit intent, tool,
	// audit outcome), with the caller auto:<name>.
	Runner *tools.Runner
	// Ask gives a prompt to the agent for the automation (caller, with its
	// creator); nil: ask actions fail.
	Ask func(ctx context.Context, caller tools.Caller, prompt string) (string, error)
	// Notify tells the consoles and the Telegram owners; nil: logged only.
	Notify func(ctx context.Context, text string)
	// PinHigh reads an input pin, for if: conditions and pin triggers.
	PinHigh func(pin string) (bool, error)
	// Edges returns a function that blocks until the pin's next edge and returns
	// the level after it (true: high); pin triggers use it (edge events, no polling).
	Edges func(pin string) (func(ctx context.Context) (bool, error), error)
	// Lines returns a function that blocks until the next line of a port.
	Lines func(port string) (func(ctx context.Context) (string, error), error)
	// Messages returns a function that blocks until the payload of the next
	// MQTT message on a topic filter.
	Messages func(filter string) (func(ctx context.Context) (string, error), error)
}

// Caller is the identity every run of automation sp acts with: auto:<name>,
// with the rights of its creator (CreatorOf) and no more.
func Caller(sp Spec) tools.Caller {
	return tools.Caller{Channel: "auto", User: "auto:" + sp.Name, Actor: tools.Automation, Creator: CreatorOf(sp), Approved: sp.Approved}
}

// ConfigAuthor is the creator of the automations in the config: whoever
// wrote it, the board's owner, acting as a person.
var ConfigAuthor = tools.Principal{Channel: "config", User: "config", Actor: tools.Person}

// unknownCreator is the creator of an automation added before creators were
// recorded: held like a program, by every rule of the policy.
var unknownCreator = tools.Principal{Channel: "auto", User: "unknown", Actor: tools.Program}

// CreatorOf is whose rights sp's runs act with.
func CreatorOf(sp Spec) *tools.Principal {
	switch {
	case sp.Creator != nil:
		c := *sp.Creator
		return &c
	case sp.Added:
		c := unknownCreator
		return &c
	}
	c := ConfigAuthor
	return &c
}

// parse parses a do: line against the registered namespaces and tools, so that a
// typo is found when the automation is loaded, not at 7 a.m.
func (e Effects) parse(line string) (*grammar.Command, error) {
	cmd, err := grammar.Parse(line, grammar.ParseOptions{Namespaces: e.Runner.Registry.Namespaces()})
	if err != nil {
		return nil, err
	}
	for _, st := range cmd.Stages {
		for _, c := range st.Calls {
			if _, err := e.Runner.Registry.Lookup(c.Tool()); err != nil {
				return nil, err
			}
		}
	}
	return cmd, nil
}

// execute runs one automation's actions and returns the outcome for the state.
func (s *Scheduler) execute(ctx context.Context, j *job, spec Spec, due time.Time, value string) string {
	now := s.clock.Now()
	if ok, why := s.holds(spec.If, now); !ok {
		return "skipped: " + why
	}
	var results []string
	var failed []string
	e := s.opt.Effects
	if spec.Do != "" {
		res, err := s.do(ctx, spec, e)
		if err != nil {
			failed = append(failed, "do: "+err.Error())
		}
		if res != "" {
			results = append(results, res)
		}
	}
	if spec.Ask != "" {
		if ok, why := s.takeAsk(j, now); !ok {
			failed = append(failed, "ask skipped: "+why)
		} else if e.Ask == nil {
			failed = append(failed, "ask: no model is configured")
		} else if reply, err := e.Ask(ctx, Caller(spec), spec.Ask); err != nil {
			failed = append(failed, "ask: "+err.Error())
		} else {
			results = append(results, reply)
		}
	}
	if spec.Notify != "" {
		text := render(spec.Notify, map[string]string{
			"{time}":   now.In(s.opt.Loc).Format("15:04"),
			"{value}":  value,
			"{name}":   spec.Name,
			"{result}": strings.Join(results, "; "),
		})
		if e.Notify != nil {
			e.Notify(ctx, text)
		}
		level, skipped := s.logs.level(spec.Name, "notify", text, now, slog.LevelInfo)
		s.log.Log(context.Background(), level, "automation notify", "automation", spec.Name, "text", text, "not_logged_since", skipped)
	}
	if len(failed) > 0 {
		why := strings.Join(failed, "; ")
		level, skipped := s.logs.level(spec.Name, "run", "error: "+why, now, slog.LevelWarn)
		s.log.Log(context.Background(), level, "automation run failed", "automation", spec.Name, "due", due.Format(time.RFC3339Nano), "err", why, "runs_not_logged_since", skipped)
		return "error: " + why
	}
	level, skipped := s.logs.level(spec.Name, "run", "ok", now, slog.LevelInfo)
	s.log.Log(context.Background(), level, "automation ran", "automation", spec.Name, "due", due.Format(time.RFC3339Nano), "runs_not_logged_since", skipped)
	return "ok"
}

func (s *Scheduler) do(ctx context.Context, spec Spec, e Effects) (string, error) {
	if e.Runner == nil {
		return "", fmt.Errorf("no tools")
	}
	cmd, err := e.parse(spec.Do)
	if err != nil {
		return "", err
	}
	rep, err := e.Runner.Run(ctx, Caller(spec), cmd)
	text := ""
	if rep != nil {
		text = rep.Text()
	}
	return text, err
}

// takeAsk counts one ask run against the automation's and the global daily
// budgets; over either, the run's ask is skipped, logged once a day.
func (s *Scheduler) takeAsk(j *job, now time.Time) (bool, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	day := s.day(now)
	if s.askDay != day {
		s.askDay, s.asks = day, 0
	}
	if j.st.AskDay != day {
		j.st.AskDay, j.st.Asks = day, 0
	}
	limit := j.spec.AsksPerDay
	why := ""
	switch {
	case limit > 0 && j.st.Asks >= limit:
		why = fmt.Sprintf("this automation's %d model calls today are used up", limit)
	case s.asks >= s.opt.AsksPerDay:
		why = fmt.Sprintf("all automations' %d model calls today are used up", s.opt.AsksPerDay)
	}
	if why != "" {
		if j.budgetLogged != day {
			j.budgetLogged = day
			s.log.Warn("automation ask skipped: over budget (logged once a day)", "automation", j.spec.Name, "why", why)
		}
		return false, why
	}
	j.st.Asks++
	s.asks++
	// Counted durably before the call, like the run itself.
	if err := s.save(j); err != nil {
		return false, "its budget could not be recorded: " + err.Error()
	}
	return true, ""
}

// holds checks an if: condition at now.
func (s *Scheduler) holds(c Condition, now time.Time) (bool, string) {
	lt := now.In(s.opt.Loc)
	if len(c.Weekdays) > 0 {
		ok := false
		for _, d := range c.Weekdays {
			ok = ok || d == lt.Weekday()
		}
		if !ok {
			return false, "not on " + lt.Weekday().String()
		}
	}
	if c.Window {
		m := lt.Hour()*60 + lt.Minute()
		in := c.From <= m && m < c.To
		if c.From > c.To { // wraps midnight
			in = m >= c.From || m < c.To
		}
		if !in {
			return false, fmt.Sprintf("%s is outside %02d:%02d-%02d:%02d", lt.Format("15:04"), c.From/60, c.From%60, c.To/60, c.To%60)
		}
	}
	if c.Pin != "" {
		if s.opt.Effects.PinHigh == nil {
			return false, "pin conditions need the board"
		}
		high, err := s.opt.Effects.PinHigh(c.Pin)
		if err != nil {
			return false, err.Error()
		}
		if high != (c.Is == "high") {
			return false, fmt.Sprintf("%s is not %s", c.Pin, c.Is)
		}
	}
	return true, ""
}
