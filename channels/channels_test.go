package channels

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// ledTool is a minimal gpio/write: the dispatcher and consoles are under test here,
// the real GPIO tools are tested in peripherals.
type ledTool struct {
	mu    sync.Mutex
	level int64
}

func (l *ledTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "gpio/write", Doc: "write a pin", Params: []grammar.ArgSpec{
		{Name: "pin", Type: grammar.TypeString, Required: true, Enum: []string{"led"}},
		{Name: "value", Type: grammar.TypeInteger, Required: true, Min: tools.Float(0), Max: tools.Float(1)},
	}}
}

func (l *ledTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.level = a.Int("value")
	return tools.Result{Text: fmt.Sprintf("led = %d", l.level), Fields: map[string]grammar.Value{"value": grammar.IntValue(l.level)}}, nil
}

func (l *ledTool) get() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.level
}

type listTool struct{ name, text string }

func (t listTool) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: t.name, Doc: "list"} }
func (t listTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	return tools.Result{Text: t.text}, nil
}

type nopAudit struct{}

func (nopAudit) Intent(who, channel, command string) (uint64, error) { return 1, nil }
func (nopAudit) Outcome(id uint64, ok bool, detail string) error     { return nil }

func newDispatcher(t *testing.T) (*Dispatcher, *ledTool) {
	t.Helper()
	led := &ledTool{}
	reg := tools.NewRegistry()
	if err := reg.Register(led, listTool{"gpio/list", "led (GPIO17, out, low)"}, listTool{"sys/help", "the help text"}, listTool{"sys/status", "uptime: 1s"}); err != nil {
		t.Fatal(err)
	}
	return &Dispatcher{Runner: &tools.Runner{Registry: reg, Audit: nopAudit{}}}, led
}

func TestDispatcher(t *testing.T) {
	d, led := newDispatcher(t)
	ctx := context.Background()
	cases := map[string]string{
		`@gpio/write{pin="led";value=1}`:  "led = 1",
		"  pins  ":                        "led (GPIO17, out, low)",
		"HELP":                            "the help text",
		"status":                          "uptime: 1s",
		"":                                "",
		"turn on the light":               NoModelReply,
		"pins please":                     NoModelReply,
		`@gpio/write{pin="led";value=}`:   "error: line 1, column 29: ",
		`[@gpio/write{pin="led";value=0}`: "error: line 1",
		`@gpio/write{pin="fan";value=1}`:  `"fan", must be one of led`,
		`@fs/read{path="/etc/passwd"}`:    `unknown namespace "fs"`,
	}
	for in, want := range cases {
		got := d.Respond(ctx, Message{Channel: "test", Text: in}).Text
		if want == "" && got != "" || !strings.Contains(got, want) {
			t.Errorf("Handle(%q) = %q, want it to contain %q", in, got, want)
		}
	}
	if led.get() != 1 {
		t.Errorf("led level %d: the one valid write set 1, and refused writes must not change it", led.get())
	}
	resp := d.Respond(ctx, Message{Text: `@gpio/write{pin="led";value=}`})
	if !resp.Failed || resp.Report != nil {
		t.Errorf("a syntax error must fail with no report: %+v", resp)
	}
	got := resp.Text
	if lines := strings.Split(got, "\n"); len(lines) != 3 || lines[2] != strings.Repeat(" ", 28)+"^" {
		t.Errorf("syntax error reply should end with the line and a caret under column 29:\n%s", got)
	}
}

type agentFunc func(context.Context, Message) (string, error)

func (f agentFunc) Reply(ctx context.Context, m Message) (string, error) { return f(ctx, m) }

func TestDispatcherAgent(t *testing.T) {
	d, _ := newDispatcher(t)
	d.Agent = agentFunc(func(_ context.Context, m Message) (string, error) { return "you said " + m.Text, nil })
	if got := d.Respond(context.Background(), Message{Text: "hello"}).Text; got != "you said hello" {
		t.Errorf("got %q", got)
	}
	d.Agent = agentFunc(func(context.Context, Message) (string, error) { return "", fmt.Errorf("model offline") })
	if got := d.Respond(context.Background(), Message{Text: "hello"}).Text; got != "error: model offline" {
		t.Errorf("got %q", got)
	}
}

func TestConsolePipedInOrder(t *testing.T) {
	d, _ := newDispatcher(t)
	c := &Console{Handler: d, Channel: "console/stdin"}
	in := "@gpio/write{pin=\"led\";value=1}\r\n\nhello\r@gpio/write{pin=\"led\";value=0}" // no final newline
	var out bytes.Buffer
	if err := c.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := "led = 1\n" + NoModelReply + "\nled = 0\n"
	if out.String() != want {
		t.Errorf("output:\n%q\nwant:\n%q", out.String(), want)
	}
}

func TestConsoleTerminalEditing(t *testing.T) {
	d, led := newDispatcher(t)
	c := &Console{Handler: d, Channel: "console/ttyS0", Prompt: "> ", Terminal: true}
	// Typo fixed with backspaces; a line dropped with Ctrl-C; a line killed with Ctrl-U;
	// an escape sequence (arrow key) ignored.
	in := "@gpio/write{pin=\"led\";value=9\x7f1}\r" +
		"@gpio/write{pin=\"led\";value=0\x03" +
		"junk\x15\x1b[Apins\r\n"
	var out bytes.Buffer
	if err := c.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if led.get() != 1 {
		t.Errorf("led = %d: the Ctrl-C'd line must not run", led.get())
	}
	for _, want := range []string{"9\b \b1}\r\n", "led = 1\r\n> ", "^C\r\n", "\b \b\b \b\b \b\b \b", "led (GPIO17, out, low)\r\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal output lacks %q:\n%q", want, got)
		}
	}
	if strings.Count(got, "led = ") != 1 {
		t.Errorf("exactly one command must have run:\n%q", got)
	}
}

func TestConsoleLineTooLong(t *testing.T) {
	d, _ := newDispatcher(t)
	c := &Console{Handler: d}
	in := strings.Repeat("x", MaxLineBytes+10) + "\nstatus\n"
	var out bytes.Buffer
	if err := c.Serve(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("error: line longer than %d bytes, ignored\nuptime: 1s\n", MaxLineBytes); out.String() != want {
		t.Errorf("got %q", out.String())
	}
}

func FuzzDispatch(f *testing.F) {
	for _, s := range []string{`@gpio/write{pin="led";value=1}`, "help", "[", "@", "\x00\xff", "pins x", `[@gpio/write{pin="led";value=1},@gpio/write{pin="led";value=0}]->@gpio/list{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		d, _ := newDispatcher(t)
		c := &Console{Handler: d, Terminal: true}
		var out bytes.Buffer
		if err := c.Serve(context.Background(), strings.NewReader(line), &out); err != nil {
			t.Fatal(err)
		}
	})
}

// Issue 11 item 19: an oversized input is never echoed whole in an error (a 100 KB
// line was 26 Telegram messages); the caret still points at the right character.
func TestDispatcherOversizedInputNotEchoed(t *testing.T) {
	d, _ := newDispatcher(t)
	long := strings.Repeat("x", 100_000)
	for _, in := range []string{
		`@gpio/write{pin="` + long + `";value=1}`,
		`@gpio/write{pin="` + long[:60_000] + `";value=}`,
		`@gpio/write{pin="` + long[:60_000] + `";value=1}`,
		`@gpio/` + long[:60_000] + `{}`,
		`@` + long[:60_000] + `/write{}`,
		"help " + long[:60_000],
		"help @gpio/" + long[:60_000],
	} {
		resp := d.Respond(context.Background(), Message{Channel: "test", Text: in})
		if !resp.Failed || len(resp.Text) > 600 {
			t.Errorf("%d-byte input: failed %v, %d-byte reply %.300q", len(in), resp.Failed, len(resp.Text), resp.Text)
		}
	}
	resp := d.Respond(context.Background(), Message{Channel: "test", Text: `@gpio/write{pin="` + long[:60_000] + `";value=}`})
	lines := strings.Split(resp.Text, "\n")
	if len(lines) != 3 || !strings.HasSuffix(lines[1], `";value=}`) || len([]rune(lines[1])) != len(lines[2]) {
		t.Errorf("caret not under the error:\n%s", resp.Text)
	}
}
