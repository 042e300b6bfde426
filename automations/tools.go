package automations

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Handle lets the auto/* tools be registered before the scheduler exists (the
// scheduler checks do: lines against the registry the tools are in).
type Handle struct{ tools.Late[Scheduler] }

func (h *Handle) get() (*Scheduler, error) {
	return h.Get("the automations run in the daemon (clawedge run); none runs in this process")
}

// RegisterTools adds auto/add, auto/list, auto/rm, auto/pause, auto/resume and
// auto/run to reg. They go through the registry like every tool, so the command
// language, the grammar offered to models, the policy and approvals cover them.
func RegisterTools(reg *tools.Registry, h *Handle) error {
	return reg.Register(addTool{h}, listTool{h},
		nameTool{h, "auto/rm", "Remove an automation created at run time.", func(s *Scheduler, n string) (string, error) {
			return "removed " + n, s.Remove(n)
		}},
		nameTool{h, "auto/pause", "Pause an automation: it does not run until resumed (kept across restarts).", func(s *Scheduler, n string) (string, error) {
			return "paused " + n, s.SetPaused(n, true)
		}},
		nameTool{h, "auto/resume", "Resume a paused automation.", func(s *Scheduler, n string) (string, error) {
			return "resumed " + n, s.SetPaused(n, false)
		}},
		nameTool{h, "auto/run", "Run an automation once now, whatever its trigger (its condition still applies).", func(s *Scheduler, n string) (string, error) {
			return "started " + n, s.RunNow(n)
		}})
}

var nameParam = grammar.ArgSpec{Name: "name", Doc: "the automation's name", Type: grammar.TypeString, Required: true, MaxLen: 32}

type nameTool struct {
	h    *Handle
	name string
	doc  string
	fn   func(*Scheduler, string) (string, error)
}

func (t nameTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: t.name, Doc: t.doc, Params: []grammar.ArgSpec{nameParam}}
}

func (t nameTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	s, err := t.h.get()
	if err != nil {
		return tools.Result{}, err
	}
	text, err := t.fn(s, a.String("name"))
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: text, Fields: map[string]grammar.Value{"name": grammar.StringValue(a.String("name"))}}, nil
}

type listTool struct{ h *Handle }

// ReadOnly: listing changes nothing (tools.ReadOnly).
func (listTool) ReadOnly() {}

func (listTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "auto/list", Doc: "List the automations: trigger, next run, last run and its outcome, paused."}
}

func (t listTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	s, err := t.h.get()
	if err != nil {
		return tools.Result{}, err
	}
	l := s.List()
	return tools.Result{Text: FormatList(l, s.opt.Loc, s.ClockTrusted()),
		Fields: map[string]grammar.Value{"count": grammar.IntValue(int64(len(l)))}}, nil
}

// FormatList writes automations one per line, for people.
func FormatList(l []Status, loc *time.Location, trusted bool) string {
	var b strings.Builder
	if !trusted {
		b.WriteString("time triggers are held: the clock is not trusted yet (before this build's date, or not synchronised)\n")
	}
	if len(l) == 0 {
		b.WriteString("no automations")
	}
	for i, st := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s", st.Name, st.Trigger)
		if !st.Next.IsZero() {
			fmt.Fprintf(&b, "; next %s", st.Next.In(loc).Format("2006-01-02 15:04:05"))
		}
		if !st.Last.IsZero() {
			fmt.Fprintf(&b, "; last %s", st.Last.In(loc).Format("2006-01-02 15:04:05"))
		}
		if st.Outcome != "" {
			fmt.Fprintf(&b, " (%s)", st.Outcome)
		}
		if st.Paused {
			b.WriteString("; paused")
		}
		if st.Running {
			b.WriteString("; running")
		}
		if st.Added {
			b.WriteString("; added at run time by " + st.Creator)
		}
	}
	return b.String()
}

type addTool struct{ h *Handle }

func durParam(name, doc string) grammar.ArgSpec {
	return grammar.ArgSpec{Name: name, Doc: doc + " (a duration such as 10m, 1h30m)", Type: grammar.TypeString, MaxLen: 16}
}

func (addTool) Spec() grammar.ToolSpec {
	str := func(name, doc string, n int) grammar.ArgSpec {
		return grammar.ArgSpec{Name: name, Doc: doc, Type: grammar.TypeString, MaxLen: n}
	}
	return grammar.ToolSpec{Name: "auto/add", Doc: "Create an automation that runs by itself (kept across restarts). " +
		"Give a name, one trigger (cron, every, at, in, sun or pin) and at least one of do, ask, notify.",
		Params: []grammar.ArgSpec{
			nameParam,
			str("cron", `five-field cron expression in local time, such as "0 7 * * *"`, 64),
			durParam("every", "run at this interval"),
			str("at", `run once at this local time, "2026-12-24 18:00"`, 32),
			durParam("in", "run once this long from now"),
			{Name: "sun", Doc: "run at sunrise or sunset", Type: grammar.TypeString, Enum: []string{"sunrise", "sunset"}},
			durParam("offset", "with sun: shift, such as -15m"),
			str("pin", "run on an edge of this input pin", 32),
			{Name: "edge", Doc: "with pin: the edge", Type: grammar.TypeString, Enum: []string{"rising", "falling", "both"}},
			durParam("debounce", "with pin: ignore changes shorter than this"),
			durParam("for", "with pin: the new level must hold this long"),
			str("do", `a command to run, such as @gpio/write{pin="led";value=1}`, 1024),
			str("ask", "a prompt for the assistant", 1024),
			str("notify", "a message to send; {time}, {value}, {name}, {result} are replaced", 512),
			{Name: "weekdays", Doc: "only on these days", Type: grammar.TypeArray, MaxItems: 7,
				Items: &grammar.ArgSpec{Type: grammar.TypeString, Enum: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}}},
			{Name: "catch_up", Doc: "runs missed while off: skip or once", Type: grammar.TypeString, Enum: []string{"skip", "once"}},
		}}
}

func (t addTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	return t.RunFor(ctx, tools.Caller{}, "", a)
}

// RunFor records who creates the automation, whose rights its runs will have:
// the caller, or, for an automation that adds another, its own creator.
func (t addTool) RunFor(_ context.Context, caller tools.Caller, approval string, a grammar.Args) (tools.Result, error) {
	s, err := t.h.get()
	if err != nil {
		return tools.Result{}, err
	}
	sp := Spec{Name: a.String("name"), Cron: a.String("cron"), Sun: SunEvent(a.String("sun")), Pin: a.String("pin"),
		Edge: a.String("edge"), Do: a.String("do"), Ask: a.String("ask"), Notify: a.String("notify"), CatchUp: a.String("catch_up"),
		Creator: creatorFrom(caller), Approved: approval}
	durs := map[string]*time.Duration{"every": &sp.Every, "offset": &sp.Offset, "debounce": &sp.Debounce, "for": &sp.For}
	var in time.Duration
	durs["in"] = &in
	for k, dst := range durs {
		if v := a.String(k); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return tools.Result{}, fmt.Errorf("%s: %q is not a duration such as 10m or 1h30m", k, v)
			}
			*dst = d
		}
	}
	now := s.clock.Now()
	if in != 0 {
		if in < time.Second {
			return tools.Result{}, errors.New("in must be at least 1s")
		}
		sp.At = now.Add(in)
	}
	if v := a.String("at"); v != "" {
		at, err := time.ParseInLocation("2006-01-02 15:04", v, s.opt.Loc)
		if err != nil {
			if at, err = time.Parse(time.RFC3339, v); err != nil {
				return tools.Result{}, fmt.Errorf("at: %q: want a local time like \"2026-12-24 18:00\" or RFC 3339", v)
			}
		}
		if !at.After(now) {
			return tools.Result{}, fmt.Errorf("at: %s is in the past", v)
		}
		sp.At = at
	}
	if sp.Pin != "" && sp.Edge == "" {
		sp.Edge = "both"
	}
	for _, d := range a.Strings("weekdays") {
		sp.If.Weekdays = append(sp.If.Weekdays, Weekday(d))
	}
	if err := s.Add(sp); err != nil {
		return tools.Result{}, err
	}
	text := "added " + sp.Name + ": " + sp.Trigger()
	for _, st := range s.List() {
		if st.Name == sp.Name && !st.Next.IsZero() {
			text += "; next " + st.Next.In(s.opt.Loc).Format("2006-01-02 15:04:05")
		}
	}
	return tools.Result{Text: text, Fields: map[string]grammar.Value{"name": grammar.StringValue(sp.Name)}}, nil
}

// creatorFrom is the creator an automation added by caller gets: an
// automation's own creator (it cannot pass on more than it has), else the
// caller itself.
func creatorFrom(caller tools.Caller) *tools.Principal {
	if caller.Creator != nil {
		c := *caller.Creator
		return &c
	}
	c := tools.Principal{Channel: caller.Channel, User: caller.User, Actor: caller.Actor}
	if c.Actor == "" {
		c.Actor = tools.Program
	}
	return &c
}
