package peripherals

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

func pinParam(doc string, names []string) grammar.ArgSpec {
	return grammar.ArgSpec{Name: "pin", Doc: doc, Type: grammar.TypeString, Required: true, Enum: names}
}

// levelResult is the result of read, write and toggle: "led = 1 (high)".
func levelResult(pin string, l hal.Level) tools.Result {
	return tools.Result{
		Text: fmt.Sprintf("%s = %d (%s)", pin, bit(l), l),
		Fields: map[string]grammar.Value{
			"pin":   str(pin),
			"value": num(bit(l)),
			"level": str(l.String()),
		},
	}
}

// levelOutput declares levelResult's fields (ToolSpec.Output), and more
// the fields a tool adds to them.
func levelOutput(more ...grammar.ArgSpec) []grammar.ArgSpec {
	return append([]grammar.ArgSpec{
		{Name: "pin", Doc: "the pin's name", Type: grammar.TypeString, Required: true},
		{Name: "value", Doc: "1 = on (high), 0 = off (low)", Type: grammar.TypeInteger, Required: true, Min: tools.Float(0), Max: tools.Float(1)},
		{Name: "level", Doc: "the level in words", Type: grammar.TypeString, Required: true, Enum: []string{hal.High.String(), hal.Low.String()}},
	}, more...)
}

// gpio/read

type gpioRead struct {
	tool
	b *hal.Board
}

func newGPIORead(b *hal.Board, pins []string) *gpioRead {
	return &gpioRead{b: b, tool: tool{grammar.ToolSpec{
		Name:   "gpio/read",
		Doc:    "Read a pin: value 1 = on (high), 0 = off (low).",
		Params: []grammar.ArgSpec{pinParam("the pin to read", pins)},
		Output: levelOutput(),
	}}}
}

func (t *gpioRead) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	p, err := t.b.Pin(a.String("pin"))
	if err != nil {
		return tools.Result{}, err
	}
	l, err := p.Read()
	if err != nil {
		return tools.Result{}, err
	}
	return levelResult(p.Name(), l), nil
}

// gpio/write

type gpioWrite struct {
	tool
	b *hal.Board
}

func newGPIOWrite(b *hal.Board, outputs []string) *gpioWrite {
	return &gpioWrite{b: b, tool: tool{grammar.ToolSpec{
		Name: "gpio/write",
		Doc:  "Switch an output pin on (value=1) or off (value=0).",
		Params: []grammar.ArgSpec{
			pinParam("the output pin", outputs),
			{Name: "value", Doc: "1 = on, 0 = off", Type: grammar.TypeInteger, Required: true, Min: tools.Float(0), Max: tools.Float(1)},
		},
		Output: levelOutput(),
	}}}
}

func (t *gpioWrite) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	p, err := t.b.Pin(a.String("pin"))
	if err != nil {
		return tools.Result{}, err
	}
	l := hal.Level(a.Int("value") == 1)
	if err := p.Write(l); err != nil {
		return tools.Result{}, err
	}
	return levelResult(p.Name(), l), nil
}

// gpio/toggle

type gpioToggle struct {
	tool
	b *hal.Board
}

func newGPIOToggle(b *hal.Board, outputs []string) *gpioToggle {
	return &gpioToggle{b: b, tool: tool{grammar.ToolSpec{
		Name:   "gpio/toggle",
		Doc:    "Switch an output pin to the opposite level.",
		Params: []grammar.ArgSpec{pinParam("the output pin", outputs)},
		Output: levelOutput(),
	}}}
}

func (t *gpioToggle) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	p, err := t.b.Pin(a.String("pin"))
	if err != nil {
		return tools.Result{}, err
	}
	l, err := p.Toggle()
	if err != nil {
		return tools.Result{}, err
	}
	return levelResult(p.Name(), l), nil
}

// gpio/pulse

type gpioPulse struct {
	tool
	b *hal.Board
}

func newGPIOPulse(b *hal.Board, outputs []string) *gpioPulse {
	return &gpioPulse{b: b, tool: tool{grammar.ToolSpec{
		Name: "gpio/pulse",
		Doc:  "Switch an output pin to the opposite level for ms milliseconds, then back.",
		Params: []grammar.ArgSpec{
			pinParam("the output pin", outputs),
			{Name: "ms", Doc: "how long, in milliseconds", Type: grammar.TypeInteger, Required: true, Min: tools.Float(1), Max: tools.Float(60000)},
		},
		Output: levelOutput(grammar.ArgSpec{Name: "ms", Doc: "how long the pulse lasted", Type: grammar.TypeInteger, Required: true}),
	}}}
}

// Run returns the level the pin is back at.
func (t *gpioPulse) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	p, err := t.b.Pin(a.String("pin"))
	if err != nil {
		return tools.Result{}, err
	}
	ms := a.Int("ms")
	before, err := p.Read()
	if err != nil {
		return tools.Result{}, err
	}
	if err := p.Pulse(ctx, time.Duration(ms)*time.Millisecond); err != nil {
		return tools.Result{}, err
	}
	after, err := p.Read()
	if err != nil {
		return tools.Result{}, err
	}
	r := levelResult(p.Name(), after)
	r.Text = fmt.Sprintf("%s pulsed %s for %d ms, now %d (%s)", p.Name(), !before, ms, bit(after), after)
	r.Fields["ms"] = grammar.IntValue(ms)
	return r, nil
}

// gpio/wait

type gpioWait struct {
	tool
	b *hal.Board
}

const defaultWaitMS = 10000

func newGPIOWait(b *hal.Board, inputs []string) *gpioWait {
	return &gpioWait{b: b, tool: tool{grammar.ToolSpec{
		Name: "gpio/wait",
		Doc:  "Wait until an input pin changes (rising: becomes 1, falling: becomes 0); an error if it does not within timeout_ms.",
		Params: []grammar.ArgSpec{
			pinParam("the input pin", inputs),
			{Name: "edge", Doc: "the change to wait for", Type: grammar.TypeString, Required: true, Enum: []string{"rising", "falling", "both"}},
			{Name: "timeout_ms", Doc: "give up after this many milliseconds", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(3600000), Default: defaultWaitMS},
		},
		Output: levelOutput(grammar.ArgSpec{Name: "edge", Doc: "the change seen", Type: grammar.TypeString, Required: true, Enum: []string{string(hal.EdgeRising), string(hal.EdgeFalling)}}),
	}}}
}

// Run fails with ErrTimeout when no edge comes in time: a chain such as
// "wait for the button, then open the door" must not go on without the press.
func (t *gpioWait) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	p, err := t.b.Pin(a.String("pin"))
	if err != nil {
		return tools.Result{}, err
	}
	edge := hal.Edge(a.String("edge"))
	ms := a.Int("timeout_ms")
	wctx, cancel := context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
	defer cancel()
	l, err := p.WaitForEdge(wctx, edge)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return tools.Result{}, fmt.Errorf("no %s edge on %s within %d ms: %w", edgeWords(edge), p.Name(), ms, ErrTimeout)
		}
		return tools.Result{}, err
	}
	seen := hal.EdgeFalling
	if l == hal.High {
		seen = hal.EdgeRising
	}
	r := levelResult(p.Name(), l)
	r.Text = fmt.Sprintf("%s: %s edge, now %d (%s)", p.Name(), seen, bit(l), l)
	r.Fields["edge"] = str(string(seen))
	return r, nil
}

func edgeWords(e hal.Edge) string {
	if e == hal.EdgeBoth {
		return "rising or falling"
	}
	return string(e)
}

// gpio/list

type gpioList struct {
	tool
	b *hal.Board
}

func newGPIOList(b *hal.Board) *gpioList {
	return &gpioList{b: b, tool: tool{grammar.ToolSpec{
		Name: "gpio/list",
		Doc:  "List the configured pins with their GPIO number, mode and level.",
		Output: []grammar.ArgSpec{{Name: "pins", Doc: "the pins' names", Type: grammar.TypeArray, Required: true,
			Items: &grammar.ArgSpec{Type: grammar.TypeString}}},
	}}}
}

func (t *gpioList) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	pins := t.b.Pins()
	names := make([]grammar.Value, len(pins))
	var sb strings.Builder
	if len(pins) == 0 {
		sb.WriteString("no pins configured")
	} else {
		w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tGPIO\tMODE\tLEVEL\tACTIVE_LOW")
		for i, p := range pins {
			names[i] = str(p.Name())
			level := "error"
			if l, err := p.Read(); err == nil {
				level = fmt.Sprintf("%d (%s)", bit(l), l)
			}
			fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%t\n", p.Name(), p.GPIO(), p.Mode(), level, p.Config().ActiveLow)
		}
		w.Flush()
	}
	return tools.Result{
		Text:   strings.TrimRight(sb.String(), "\n"),
		Fields: map[string]grammar.Value{"pins": grammar.ArrayValue(names...)},
	}, nil
}
