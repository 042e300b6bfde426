package sys

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/tools"
)

// Exec is what sys/exec may run and how it is confined.
type Exec struct {
	// Full lets any absolute program run (still sandboxed); otherwise only
	// what Allow lists.
	Full  bool
	Allow []ExecRule
	// Sandbox is the template of every run: paths, network, limits. Program
	// and Args are filled in per call.
	Sandbox sandbox.Spec
	Runner  *sandbox.Runner
}

// ExecRule is one allowed program: Args holds one pattern per position,
// each matched against the whole argument.
type ExecRule struct {
	Program string
	Args    []*regexp.Regexp
}

// NewExecRule compiles a rule, anchoring each pattern so that "measure_temp"
// does not also allow "measure_temp; reboot" (not that a shell ever sees it).
func NewExecRule(program string, args []string) (ExecRule, error) {
	r := ExecRule{Program: program}
	for i, a := range args {
		re, err := regexp.Compile(`^(?:` + a + `)$`)
		if err != nil {
			return r, fmt.Errorf("exec.allow %s args[%d]: %v", program, i, err)
		}
		r.Args = append(r.Args, re)
	}
	return r, nil
}

func (r ExecRule) matches(program string, args []string) bool {
	if program != r.Program || len(args) != len(r.Args) {
		return false
	}
	for i, re := range r.Args {
		if !re.MatchString(args[i]) {
			return false
		}
	}
	return true
}

// RegisterExec adds sys/exec to reg.
func RegisterExec(reg *tools.Registry, e Exec) error {
	return reg.Register(&execTool{e})
}

type execTool struct{ e Exec }

func (t *execTool) Spec() grammar.ToolSpec {
	program := grammar.ArgSpec{Name: "program", Doc: "absolute path of the program (never a shell command line)", Type: grammar.TypeString, Required: true, MaxLen: 4096}
	if !t.e.Full {
		// The grammar can then only name an allowed program.
		for _, r := range t.e.Allow {
			if !slices.Contains(program.Enum, r.Program) {
				program.Enum = append(program.Enum, r.Program)
			}
		}
	}
	return grammar.ToolSpec{Name: "sys/exec", Doc: "Run a program, sandboxed, with arguments as a list (argv), and return its output.", Params: []grammar.ArgSpec{
		program,
		{Name: "args", Doc: "the arguments, one per item", Type: grammar.TypeArray, MaxItems: 64, Items: &grammar.ArgSpec{Type: grammar.TypeString, MaxLen: 4096}},
		{Name: "timeout_ms", Doc: "wall-clock limit; the whole process group is killed after it", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(600000), Default: 5000},
	}}
}

// ErrNotAllowed is wrapped by the error of a call that no exec.allow entry permits.
var ErrNotAllowed = errors.New("not allowed by exec.allow")

func (t *execTool) Run(ctx context.Context, args grammar.Args) (tools.Result, error) {
	program, argv := args.String("program"), args.Strings("args")
	if !t.e.Full && !slices.ContainsFunc(t.e.Allow, func(r ExecRule) bool { return r.matches(program, argv) }) {
		return tools.Result{}, fmt.Errorf("%s %q: %w (mode allowlist)", program, argv, ErrNotAllowed)
	}
	s := t.e.Sandbox
	s.Program, s.Args = program, argv
	res, err := t.e.Runner.Run(ctx, s, time.Duration(args.Int("timeout_ms"))*time.Millisecond)
	if err != nil {
		return tools.Result{}, err
	}
	return RunResult(program, res)
}

// RunResult is the tool result of a sandboxed run: its output as text and
// fields, and an error naming who (a program, a skill's tool) when it did not
// end with status 0, with the first line of its stderr. sys/exec and skills'
// script tools answer alike.
func RunResult(who string, res sandbox.Result) (tools.Result, error) {
	out := string(res.Stdout)
	fields := map[string]grammar.Value{
		"exit_code": grammar.IntValue(int64(res.ExitCode)),
		"stdout":    grammar.StringValue(out),
		"stderr":    grammar.StringValue(string(res.Stderr)),
		"truncated": grammar.BoolValue(res.Truncated),
	}
	if res.ExitCode != 0 || res.Signal != "" || res.TimedOut {
		msg := strings.TrimSpace(string(res.Stderr))
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg != "" {
			msg = ": " + msg
		}
		return tools.Result{Text: out, Fields: fields}, fmt.Errorf("%s %s%s", who, res.Reason(), msg)
	}
	return tools.Result{Text: strings.TrimRight(out, "\n"), Fields: fields}, nil
}
