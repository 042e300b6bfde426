package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
)

// recordTool is a tool whose Run records its args and returns fields.
type recordTool struct {
	spec  grammar.ToolSpec
	calls atomic.Int32
	run   func(grammar.Args) (Result, error)
}

func (t *recordTool) Spec() grammar.ToolSpec { return t.spec }
func (t *recordTool) Run(ctx context.Context, a grammar.Args) (Result, error) {
	t.calls.Add(1)
	return t.run(a)
}

// memAudit is an in-memory Auditor that checks the order: intent before outcome.
type memAudit struct {
	mu       sync.Mutex
	intents  []string
	outcomes map[uint64]bool
	failNext bool
}

func (m *memAudit) Intent(who, channel, command string) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failNext {
		return 0, errors.New("disk full")
	}
	m.intents = append(m.intents, channel+" "+who+" "+command)
	return uint64(len(m.intents)), nil
}

func (m *memAudit) Outcome(id uint64, ok bool, detail string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.outcomes == nil {
		m.outcomes = map[uint64]bool{}
	}
	if _, dup := m.outcomes[id]; dup || id == 0 || id > uint64(len(m.intents)) {
		return fmt.Errorf("bad outcome id %d", id)
	}
	m.outcomes[id] = ok
	return nil
}

var writeSpec = grammar.ToolSpec{Name: "gpio/write", Doc: "write", Params: []grammar.ArgSpec{
	{Name: "pin", Type: grammar.TypeString, Required: true, Enum: []string{"led", "relay"}},
	{Name: "value", Type: grammar.TypeInteger, Required: true, Min: Float(0), Max: Float(1)},
}}

func newTestRunner(t *testing.T) (*Runner, *memAudit, map[string]*recordTool) {
	t.Helper()
	level := map[string]int64{}
	var mu sync.Mutex
	ts := map[string]*recordTool{
		"gpio/write": {spec: writeSpec, run: func(a grammar.Args) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			level[a.String("pin")] = a.Int("value")
			return Result{Text: fmt.Sprintf("%s = %d", a.String("pin"), a.Int("value")),
				Fields: map[string]grammar.Value{"pin": grammar.StringValue(a.String("pin")), "value": grammar.IntValue(a.Int("value"))}}, nil
		}},
		"gpio/read": {spec: grammar.ToolSpec{Name: "gpio/read", Doc: "read", Params: []grammar.ArgSpec{{Name: "pin", Type: grammar.TypeString, Required: true}}}, run: func(a grammar.Args) (Result, error) {
			mu.Lock()
			defer mu.Unlock()
			v, ok := level[a.String("pin")]
			if !ok && a.String("pin") != "button" {
				return Result{}, fmt.Errorf("unknown pin %q", a.String("pin"))
			}
			return Result{Text: fmt.Sprintf("%s = %d", a.String("pin"), v), Fields: map[string]grammar.Value{"value": grammar.IntValue(v)}}, nil
		}},
		"sys/echo": {spec: grammar.ToolSpec{Name: "sys/echo", Doc: "echo", Params: []grammar.ArgSpec{
			{Name: "text", Type: grammar.TypeString, MaxLen: 5},
			{Name: "ratio", Type: grammar.TypeNumber, Min: Float(0.5)},
			{Name: "flag", Type: grammar.TypeBoolean},
			{Name: "list", Type: grammar.TypeArray, MaxItems: 3, Items: &grammar.ArgSpec{Type: grammar.TypeInteger, Max: Float(9)}},
		}}, run: func(a grammar.Args) (Result, error) {
			return Result{Text: fmt.Sprintf("%q %v %v %v", a.String("text"), a.Float("ratio"), a.Bool("flag"), len(a.Strings("list"))),
				Fields: map[string]grammar.Value{"text": grammar.StringValue(a.String("text"))}}, nil
		}},
	}
	reg := NewRegistry()
	for _, tl := range ts {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	audit := &memAudit{}
	return &Runner{Registry: reg, Audit: audit, Env: map[string]string{"SITE": "shed"},
		Self: map[string]grammar.Value{"name": grammar.StringValue("pi")}}, audit, ts
}

func run(t *testing.T, r *Runner, line string) (*Report, error) {
	t.Helper()
	cmd, err := grammar.Parse(line, grammar.ParseOptions{Namespaces: r.Registry.Namespaces()})
	if err != nil {
		t.Fatalf("parse %q: %v", line, err)
	}
	return r.Run(context.Background(), Caller{Channel: "test", User: "alice"}, cmd)
}

func TestValidate(t *testing.T) {
	p := func(k string, v grammar.Value) grammar.Param { return grammar.Param{Key: k, Value: v} }
	cases := []struct {
		spec   grammar.ToolSpec
		params []grammar.Param
		errSub string
	}{
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("led")), p("value", grammar.IntValue(1))}, ""},
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("fan")), p("value", grammar.IntValue(1))}, `parameter "pin" is "fan", must be one of led, relay`},
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("led")), p("value", grammar.IntValue(2))}, `parameter "value" is 2, must be at most 1`},
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("led")), p("value", grammar.IntValue(-1))}, "must be at least 0"},
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("led")), p("value", grammar.FloatValue(0.5))}, "must be an integer 0..1, got number"},
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("led"))}, `parameter "value" is required`},
		{writeSpec, []grammar.Param{p("pin", grammar.IntValue(3)), p("value", grammar.IntValue(1))}, "must be a string (one of led, relay), got integer"},
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("led")), p("value", grammar.IntValue(1)), p("colour", grammar.StringValue("red"))}, `"colour" is not a parameter of this tool (parameters: pin, value)`},
		{writeSpec, []grammar.Param{p("pin", grammar.StringValue("led")), p("pin", grammar.StringValue("led")), p("value", grammar.IntValue(1))}, "given twice"},
	}
	for _, c := range cases {
		_, err := c.spec.Validate(c.params)
		switch {
		case c.errSub == "" && err != nil:
			t.Errorf("%v: unexpected error %v", c.params, err)
		case c.errSub != "" && (err == nil || !strings.Contains(err.Error(), c.errSub)):
			t.Errorf("%v: error %v, want it to contain %q", c.params, err, c.errSub)
		}
	}
}

func TestValidateConvertsAndChecksArrays(t *testing.T) {
	r, _, _ := newTestRunner(t)
	rep, err := run(t, r, `@sys/echo{text="héllo";ratio=1;flag=yes;list=(1,2,3)}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Text(); !strings.HasPrefix(got, `"héllo" 1 true`) {
		t.Errorf("text = %q (integer must widen to number, max_len counts characters)", got)
	}
	for line, want := range map[string]string{
		`@sys/echo{text="toolong"}`:   "7 characters long, at most 5",
		`@sys/echo{ratio=0.25}`:       "must be at least 0.5",
		`@sys/echo{list=(1,10)}`:      "item 2 is 10, must be at most 9",
		`@sys/echo{list=("a")}`:       "item 1 must be an integer",
		`@sys/echo{list=(1,2,3,4)}`:   `parameter "list" has 4 items, must have 0..3 items`,
		`@sys/echo{flag="true"}`:      "must be a boolean, got string",
		`@sys/echo{text=$prev.text}`:  "no previous result",
		`@sys/echo{text=$env.HOME}`:   "$env.HOME is not readable",
		`@sys/echo{text=$ctx.nope}`:   "$ctx.nope does not exist (there is: channel, time, user)",
		`@sys/echo{text=$self.board}`: "$self.board does not exist (there is: name)",
	} {
		if _, err := run(t, r, line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", line, err, want)
		}
	}
}

func TestRunChainPassesPrev(t *testing.T) {
	r, audit, _ := newTestRunner(t)
	rep, err := run(t, r, `@gpio/write{pin="relay";value=1}->@gpio/write{pin="led";value=$prev.value}->@gpio/read{pin=$prev.pin}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "gpio/write: relay = 1\ngpio/write: led = 1\ngpio/read: led = 1"
	if rep.Text() != want {
		t.Errorf("text:\n%s\nwant:\n%s", rep.Text(), want)
	}
	// The audit records the calls with references resolved, in order, each with an outcome.
	wantAudit := []string{
		`test alice @gpio/write{pin="relay";value=1}`,
		`test alice @gpio/write{pin="led";value=1}`,
		`test alice @gpio/read{pin="led"}`,
	}
	if strings.Join(audit.intents, "\n") != strings.Join(wantAudit, "\n") {
		t.Errorf("audit intents:\n%s", strings.Join(audit.intents, "\n"))
	}
	if len(audit.outcomes) != 3 {
		t.Errorf("outcomes = %v", audit.outcomes)
	}
}

func TestRunEnvSelfCtx(t *testing.T) {
	r, _, _ := newTestRunner(t)
	rep, err := run(t, r, `@sys/echo{text=$env.SITE}->@sys/echo{text=$self.name}->@sys/echo{text=$ctx.user}`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range rep.Stages {
		got = append(got, st.Calls[0].Result.Fields["text"].Str)
	}
	if strings.Join(got, ",") != "shed,pi,alice" {
		t.Errorf("$env, $self, $ctx resolved to %v, want shed, pi, alice", got)
	}
}

func TestRunChecksEveryStageBeforeAnyEffect(t *testing.T) {
	r, audit, ts := newTestRunner(t)
	for _, line := range []string{
		`@gpio/write{pin="led";value=1}->@gpio/nope{}`,
		`@gpio/write{pin="led";value=1}->@gpio/write{pin="led";value=7}`,
		`@gpio/write{pin="led";value=1}->[@gpio/read{pin="led"},@gpio/write{pin="fan";value=$prev.value}]`,
		`@gpio/write{pin="led";value=1}->@gpio/write{pin="led"}`,
	} {
		rep, err := run(t, r, line)
		if err == nil {
			t.Errorf("%s: no error", line)
		}
		if rep == nil || len(rep.Stages) != 0 {
			t.Errorf("%s: stages ran: %+v", line, rep)
		}
	}
	if n := ts["gpio/write"].calls.Load(); n != 0 {
		t.Errorf("gpio/write ran %d times; nothing may run when a later stage is invalid", n)
	}
	if len(audit.intents) != 0 {
		t.Errorf("audit has intents for commands that never ran: %v", audit.intents)
	}
}

func TestRunParallelReportsEachAndStopsChain(t *testing.T) {
	r, _, ts := newTestRunner(t)
	rep, err := run(t, r, `[@gpio/write{pin="led";value=1},@gpio/read{pin="nothere"}]->@gpio/write{pin="relay";value=1}`)
	if err == nil || !strings.Contains(err.Error(), `unknown pin "nothere"`) {
		t.Fatalf("err = %v", err)
	}
	if len(rep.Stages) != 1 || len(rep.Stages[0].Calls) != 2 {
		t.Fatalf("report = %+v; the chain must stop after the failing parallel stage", rep)
	}
	if got := rep.Text(); !strings.Contains(got, "gpio/write: led = 1") || !strings.Contains(got, "gpio/read: error: gpio/read: unknown pin") {
		t.Errorf("text = %q", got)
	}
	if n := ts["gpio/write"].calls.Load(); n != 1 {
		t.Errorf("gpio/write ran %d times, want 1 (the stage after the failure must not run)", n)
	}
}

func TestRunParallelIsConcurrent(t *testing.T) {
	reg := NewRegistry()
	var inFlight, peak atomic.Int32
	slow := &recordTool{spec: grammar.ToolSpec{Name: "sys/slow", Doc: "slow", Params: []grammar.ArgSpec{{Name: "id", Type: grammar.TypeInteger}}}, run: func(a grammar.Args) (Result, error) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		return Result{Text: "done", Fields: map[string]grammar.Value{"id": grammar.IntValue(a.Int("id"))}}, nil
	}}
	reg.Register(slow)
	r := &Runner{Registry: reg, Audit: &memAudit{}}
	rep, err := run(t, r, `[@sys/slow{id=1},@sys/slow{id=2},@sys/slow{id=3}]`)
	if err != nil {
		t.Fatal(err)
	}
	if peak.Load() < 2 {
		t.Errorf("peak concurrency %d: parallel calls ran one after another", peak.Load())
	}
	if len(rep.Stages[0].Calls) != 3 || rep.Stages[0].Calls[2].Result.Fields["id"].Int != 3 {
		t.Errorf("results out of written order: %+v", rep.Stages[0].Calls)
	}
}

func TestRunRefusesWhenAuditFails(t *testing.T) {
	r, audit, ts := newTestRunner(t)
	audit.failNext = true
	_, err := run(t, r, `@gpio/write{pin="led";value=1}`)
	if err == nil || !strings.Contains(err.Error(), "audit trail unavailable") {
		t.Errorf("err = %v", err)
	}
	if ts["gpio/write"].calls.Load() != 0 {
		t.Error("a tool ran although its intent could not be recorded")
	}
}

func TestRegistry(t *testing.T) {
	r, _, _ := newTestRunner(t)
	if err := r.Registry.Register(&recordTool{spec: writeSpec}); err == nil {
		t.Error("duplicate registration accepted")
	}
	if _, err := r.Registry.Lookup("gpio/wirte"); err == nil || !strings.Contains(err.Error(), "gpio/read, gpio/write") {
		t.Errorf("lookup error %v should list the namespace's tools", err)
	}
	if got := strings.Join(r.Registry.Namespaces(), ","); got != "gpio,sys" {
		t.Errorf("namespaces = %s", got)
	}
	bad := []grammar.ToolSpec{
		{Name: "gpio write"},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: "float"}}},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: grammar.TypeInteger, Enum: []string{"x"}}}},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: grammar.TypeInteger, Min: Float(2), Max: Float(1)}}},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: grammar.TypeArray}}},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: grammar.TypeString}, {Name: "a", Type: grammar.TypeString}}},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: grammar.TypeBoolean, MaxLen: 3}}},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: grammar.TypeString, MaxItems: 3}}},
		{Name: "gpio/w", Params: []grammar.ArgSpec{{Name: "a", Type: grammar.TypeArray, Items: &grammar.ArgSpec{Type: grammar.TypeInteger}, MinItems: 4, MaxItems: 3}}},
	}
	for _, s := range bad {
		if err := s.Check(); err == nil {
			t.Errorf("spec %+v accepted", s)
		}
	}
}

func BenchmarkRunWrite(b *testing.B) {
	t := &testing.T{}
	r, _, _ := newTestRunner(t)
	r.Audit = nopAudit{}
	cmd, _ := grammar.Parse(`@gpio/write{pin="led";value=1}`, grammar.ParseOptions{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Run(context.Background(), Caller{}, cmd); err != nil {
			b.Fatal(err)
		}
	}
}

type nopAudit struct{}

func (nopAudit) Intent(who, channel, command string) (uint64, error) { return 1, nil }
func (nopAudit) Outcome(id uint64, ok bool, detail string) error     { return nil }

func TestDefaults(t *testing.T) {
	spec := grammar.ToolSpec{Name: "serial/read", Doc: "read", Params: []grammar.ArgSpec{
		{Name: "timeout_ms", Type: grammar.TypeInteger, Min: Float(1), Max: Float(60000), Default: 1000},
		{Name: "eol", Type: grammar.TypeString, Enum: []string{"lf", "crlf"}, Default: "lf"},
		{Name: "ratio", Type: grammar.TypeNumber, Default: 0.5},
		{Name: "raw", Type: grammar.TypeBoolean, Default: true},
		{Name: "max", Type: grammar.TypeInteger, Default: float64(64)}, // as read from a JSON tools file
		{Name: "note", Type: grammar.TypeString},
	}}
	if err := spec.Check(); err != nil {
		t.Fatal(err)
	}
	a, err := spec.Validate([]grammar.Param{{Key: "eol", Value: grammar.StringValue("crlf")}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Int("timeout_ms") != 1000 || a.String("eol") != "crlf" || a.Float("ratio") != 0.5 || !a.Bool("raw") || a.Int("max") != 64 {
		t.Errorf("defaults not filled in: %+v", a)
	}
	if a.Has("note") {
		t.Error("a parameter without a default must stay absent")
	}
	for _, bad := range []grammar.ArgSpec{
		{Name: "a", Type: grammar.TypeInteger, Max: Float(10), Default: 11},
		{Name: "a", Type: grammar.TypeInteger, Default: 1.5},
		{Name: "a", Type: grammar.TypeString, Enum: []string{"x"}, Default: "y"},
		{Name: "a", Type: grammar.TypeString, Required: true, Default: "x"},
		{Name: "a", Type: grammar.TypeBoolean, Default: "yes"},
		{Name: "a", Type: grammar.TypeArray, Items: &grammar.ArgSpec{Type: grammar.TypeInteger}, Default: 1},
		{Name: "a", Type: grammar.TypeString, Default: []string{"x"}},
	} {
		if err := (grammar.ToolSpec{Name: "x/y", Params: []grammar.ArgSpec{bad}}).Check(); err == nil {
			t.Errorf("default %#v accepted for %+v", bad.Default, bad)
		}
	}
}
