package peripherals

import (
	"context"
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

// maxSPIBytes bounds one transfer's write and its read: more than an ADC's
// or a display controller's command, less than a flash page, which a model
// has no business writing byte by byte.
const maxSPIBytes = 64

func spiParam(devs []string) grammar.ArgSpec {
	return grammar.ArgSpec{Name: "dev", Doc: "the SPI device", Type: grammar.TypeString, Required: true, Enum: devs}
}

// spi/transfer

type spiTransfer struct {
	tool
	b *hal.Board
}

func newSPITransfer(b *hal.Board, devs []string) *spiTransfer {
	return &spiTransfer{b: b, tool: tool{grammar.ToolSpec{
		Name: "spi/transfer",
		Doc: "Clock bytes out to an SPI device and read its answer: write is sent, then read more bytes are clocked (sending zeros) and returned. " +
			"SPI is full duplex: the bytes received while write was sent are in the field received.",
		Params: []grammar.ArgSpec{
			spiParam(devs),
			{Name: "write", Doc: "the bytes to send, 0 to 64 of them: (0x01,0x80)", Type: grammar.TypeArray, MaxItems: maxSPIBytes,
				Items: &grammar.ArgSpec{Type: grammar.TypeInteger, Min: tools.Float(0), Max: tools.Float(255)}},
			{Name: "read", Doc: "how many bytes to read after write", Type: grammar.TypeInteger, Min: tools.Float(0), Max: tools.Float(maxSPIBytes), Default: 0},
		},
	}}}
}

func (t *spiTransfer) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	h, err := t.b.SPI(a.String("dev"))
	if err != nil {
		return tools.Result{}, err
	}
	var out []byte
	if v, ok := a.Value("write"); ok {
		for _, it := range v.Items {
			out = append(out, byte(it.Int))
		}
	}
	n := int(a.Int("read"))
	if len(out)+n == 0 {
		return tools.Result{}, fmt.Errorf("spi %s: nothing to transfer: give write, read or both", h.Name())
	}
	w := append(out, make([]byte, n)...)
	r := make([]byte, len(w))
	if err := h.Tx(ctx, w, r); err != nil {
		return tools.Result{}, err
	}
	got := r[len(out):]
	var text strings.Builder
	fmt.Fprintf(&text, "%s:", h.Name())
	if len(out) > 0 {
		fmt.Fprintf(&text, " wrote %s", hexBytes(out))
	}
	if n > 0 {
		if len(out) > 0 {
			text.WriteString(",")
		}
		fmt.Fprintf(&text, " read %s", hexBytes(got))
	}
	return tools.Result{
		Text: text.String(),
		Fields: map[string]grammar.Value{
			"dev":      str(h.Name()),
			"bytes":    intArray(got),
			"hex":      str(hexBytes(got)),
			"received": intArray(r),
		},
	}, nil
}

// spi/list

type spiList struct {
	tool
	b *hal.Board
}

func newSPIList(b *hal.Board) *spiList {
	return &spiList{b: b, tool: tool{grammar.ToolSpec{
		Name: "spi/list",
		Doc:  "List the configured SPI devices: device, clock and mode.",
	}}}
}

func (t *spiList) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	devs := t.b.SPIs()
	names := make([]grammar.Value, len(devs))
	lines := make([]string, len(devs))
	for i, h := range devs {
		c := h.Config()
		names[i] = str(h.Name())
		lines[i] = fmt.Sprintf("%s: /dev/spidev%s, %d Hz, mode %d", h.Name(), c.Dev, c.Hz, c.Mode)
	}
	text := "no SPI devices configured"
	if len(lines) > 0 {
		text = strings.Join(lines, "\n")
	}
	return tools.Result{Text: text, Fields: map[string]grammar.Value{"devices": grammar.ArrayValue(names...)}}, nil
}
