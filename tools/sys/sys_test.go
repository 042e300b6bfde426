package sys

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

type writeTool struct{}

func (writeTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "gpio/write", Doc: "Switch an output.", Params: []grammar.ArgSpec{
		{Name: "pin", Doc: "the pin", Type: grammar.TypeString, Required: true, Enum: []string{"led", "relay"}},
		{Name: "value", Type: grammar.TypeInteger, Required: true, Min: tools.Float(0), Max: tools.Float(1)},
		{Name: "hold_ms", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(3600000)},
	}}
}
func (writeTool) Run(context.Context, grammar.Args) (tools.Result, error) { return tools.Result{}, nil }

func call(t *testing.T, reg *tools.Registry, name string, params ...grammar.Param) (tools.Result, error) {
	t.Helper()
	tl, err := reg.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	args, err := tl.Spec().Validate(params)
	if err != nil {
		return tools.Result{}, err
	}
	return tl.Run(context.Background(), args)
}

func TestStatusHelpAudit(t *testing.T) {
	reg := tools.NewRegistry()
	reg.Register(writeTool{})
	var asked int
	err := Register(reg, Info{
		Version: "v9", Started: time.Now().Add(-90 * time.Second),
		Facts: func() []Fact { return []Fact{{"board", grammar.StringValue("sim")}} },
		Audit: func(n int) ([]string, error) {
			asked = n
			if n == 7 {
				return nil, errors.New("store closed")
			}
			return []string{"#1 a", "#2 b"}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := call(t, reg, "sys/status")
	if err != nil {
		t.Fatal(err)
	}
	if res.Fields["version"].Str != "v9" || res.Fields["board"].Str != "sim" || res.Fields["uptime"].Str != "1m30s" {
		t.Errorf("status fields %v", res.Fields)
	}
	if !strings.Contains(res.Text, "board: sim") {
		t.Errorf("status text %q", res.Text)
	}
	// The process's resident memory, as the kernel counts it.
	procStatus = filepath.Join(t.TempDir(), "status")
	os.WriteFile(procStatus, []byte("Name:\tclawedge\nVmRSS:\t   18432 kB\nRssAnon:\t    9216 kB\nRssFile:\t9216 kB\n"), 0o600)
	defer func() { procStatus = "/proc/self/status" }()
	res, _ = call(t, reg, "sys/status")
	if res.Fields["rss_kb"].Int != 18432 || res.Fields["rss_anon_kb"].Int != 9216 || !strings.Contains(res.Text, "rss_kb: 18432\nrss_anon_kb: 9216\n") {
		t.Errorf("rss: %v\n%s", res.Fields, res.Text)
	}

	res, _ = call(t, reg, "sys/help")
	for _, want := range []string{"@gpio/write  Switch an output.", "@sys/audit", "help TOOL"} {
		if !strings.Contains(res.Text, want) {
			t.Errorf("help lacks %q:\n%s", want, res.Text)
		}
	}
	res, _ = call(t, reg, "sys/help", grammar.Param{Key: "tool", Value: grammar.StringValue("gpio/write")})
	want := `@gpio/write — Switch an output.
  pin: string (led|relay), required — the pin
  value: integer 0..1, required
  hold_ms: integer 1..3600000, optional
example: @gpio/write{pin="led";value=0}`
	if res.Text != want {
		t.Errorf("help gpio/write:\n%s\nwant:\n%s", res.Text, want)
	}
	// The example must itself be a valid call.
	cmd, err := grammar.Parse(strings.TrimPrefix(res.Text[strings.LastIndex(res.Text, "example: "):], "example: "), grammar.ParseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (writeTool{}).Spec().Validate(cmd.Stages[0].Calls[0].Params); err != nil {
		t.Errorf("the help example does not validate: %v", err)
	}
	if _, err := call(t, reg, "sys/help", grammar.Param{Key: "tool", Value: grammar.StringValue("gpio/wirte")}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
		t.Errorf("help for an unknown tool: %v", err)
	}

	res, _ = call(t, reg, "sys/audit", grammar.Param{Key: "n", Value: grammar.IntValue(2)})
	if asked != 2 || res.Text != "#1 a\n#2 b" {
		t.Errorf("audit asked %d, text %q", asked, res.Text)
	}
	if _, err := call(t, reg, "sys/audit", grammar.Param{Key: "n", Value: grammar.IntValue(7)}); err == nil {
		t.Error("audit error swallowed")
	}
	if _, err := call(t, reg, "sys/audit", grammar.Param{Key: "n", Value: grammar.IntValue(500)}); err == nil {
		t.Error("n=500 accepted")
	}
}

func TestNoAuditWithoutStore(t *testing.T) {
	reg := tools.NewRegistry()
	if err := Register(reg, Info{Version: "v"}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Lookup("sys/audit"); err == nil {
		t.Error("sys/audit registered without a store")
	}
}
