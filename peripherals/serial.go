package peripherals

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

const (
	defaultReadMS   = 1000
	defaultMaxBytes = 4096
	// quiet is how long serial/read waits after the last byte before it
	// returns: a reply has ended when the line goes quiet.
	quiet = 100 * time.Millisecond
	// readSlice bounds one blocking read, so ctx is checked at least this often.
	readSlice = 50 * time.Millisecond
	// showBytes bounds how much data a Text line quotes.
	showBytes = 120
)

func portParam(ports []string) grammar.ArgSpec {
	return grammar.ArgSpec{Name: "port", Doc: "the serial port", Type: grammar.TypeString, Required: true, Enum: ports}
}

func timeoutParam(doc string) grammar.ArgSpec {
	return grammar.ArgSpec{Name: "timeout_ms", Doc: doc, Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(60000), Default: defaultReadMS}
}

func maxBytesParam() grammar.ArgSpec {
	return grammar.ArgSpec{Name: "max_bytes", Doc: "stop after this many bytes", Type: grammar.TypeInteger, Min: tools.Float(1), Max: tools.Float(65536), Default: defaultMaxBytes}
}

// serial/send

type serialSend struct {
	tool
	b *hal.Board
}

func newSerialSend(b *hal.Board, ports []string) *serialSend {
	return &serialSend{b: b, tool: tool{grammar.ToolSpec{
		Name: "serial/send",
		Doc:  "Send text to a serial port, followed by a line ending (eol).",
		Params: []grammar.ArgSpec{
			portParam(ports),
			{Name: "data", Doc: "the text to send", Type: grammar.TypeString, Required: true, MaxLen: 4096},
			{Name: "eol", Doc: "line ending after data: none, lf (\\n) or crlf (\\r\\n)", Type: grammar.TypeString, Enum: []string{"none", "lf", "crlf"}, Default: "lf"},
		},
	}}}
}

func (t *serialSend) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	p, err := t.b.Port(a.String("port"))
	if err != nil {
		return tools.Result{}, err
	}
	out := []byte(a.String("data"))
	switch a.String("eol") {
	case "lf":
		out = append(out, '\n')
	case "crlf":
		out = append(out, '\r', '\n')
	}
	err = p.Do(ctx, func(c hal.PortConn) error {
		for sent := 0; sent < len(out); {
			if err := ctx.Err(); err != nil {
				return err
			}
			n, err := c.Write(out[sent:])
			sent += n
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{
		Text:   fmt.Sprintf("sent %d bytes to %s", len(out), p.Name()),
		Fields: map[string]grammar.Value{"port": str(p.Name()), "bytes": num(len(out))},
	}, nil
}

// serial/read

type serialRead struct {
	tool
	b *hal.Board
}

func newSerialRead(b *hal.Board, ports []string) *serialRead {
	return &serialRead{b: b, tool: tool{grammar.ToolSpec{
		Name: "serial/read",
		Doc:  "Read what a serial port sends; returns after timeout_ms, max_bytes, or 100 ms of quiet once data came.",
		Params: []grammar.ArgSpec{
			portParam(ports),
			timeoutParam("wait at most this many milliseconds"),
			maxBytesParam(),
		},
	}}}
}

// Run returns what arrived; nothing arriving is not an error.
func (t *serialRead) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	p, err := t.b.Port(a.String("port"))
	if err != nil {
		return tools.Result{}, err
	}
	ms := a.Int("timeout_ms")
	var got []byte
	err = p.Do(ctx, func(c hal.PortConn) error {
		var err error
		got, _, err = read(ctx, c, reading{
			timeout: time.Duration(ms) * time.Millisecond,
			max:     int(a.Int("max_bytes")),
			quiet:   quiet,
		})
		return err
	})
	if err != nil {
		return tools.Result{}, err
	}
	data := printable(got)
	text := fmt.Sprintf("%s: read %d bytes: %s", p.Name(), len(got), quoteShort(data))
	if len(got) == 0 {
		text = fmt.Sprintf("%s: nothing arrived within %d ms", p.Name(), ms)
	}
	return tools.Result{
		Text: text,
		Fields: map[string]grammar.Value{
			"port":  str(p.Name()),
			"data":  str(data),
			"bytes": num(len(got)),
		},
	}, nil
}

// serial/expect

type serialExpect struct {
	tool
	b *hal.Board
}

func newSerialExpect(b *hal.Board, ports []string) *serialExpect {
	return &serialExpect{b: b, tool: tool{grammar.ToolSpec{
		Name: "serial/expect",
		Doc:  "Read from a serial port until the regexp pattern matches; matched=false if it does not within timeout_ms.",
		Params: []grammar.ArgSpec{
			portParam(ports),
			{Name: "pattern", Doc: "a Go (RE2) regular expression", Type: grammar.TypeString, Required: true, MaxLen: 256},
			timeoutParam("give up after this many milliseconds"),
			maxBytesParam(),
		},
	}}}
}

// Run matches as soon as the data read so far matches: anchor the pattern to a
// line end (`T=\d+\r?\n`) to wait for whole lines. Data already buffered by
// the port counts. A timeout or max_bytes without a match is not an error:
// matched is false.
func (t *serialExpect) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	pattern := a.String("pattern")
	re, err := regexp.Compile(pattern)
	if err != nil {
		return tools.Result{}, fmt.Errorf("pattern %q is not a valid regular expression: %w", pattern, err)
	}
	p, err := t.b.Port(a.String("port"))
	if err != nil {
		return tools.Result{}, err
	}
	ms := a.Int("timeout_ms")
	maxBytes := int(a.Int("max_bytes"))
	var (
		got  []byte
		how  stop
		span []int
	)
	err = p.Do(ctx, func(c hal.PortConn) error {
		var err error
		got, how, err = read(ctx, c, reading{
			timeout: time.Duration(ms) * time.Millisecond,
			max:     maxBytes,
			done: func(b []byte) bool {
				span = re.FindIndex(b)
				return span != nil
			},
		})
		return err
	})
	if err != nil {
		return tools.Result{}, err
	}
	data := printable(got)
	r := tools.Result{Fields: map[string]grammar.Value{
		"port":    str(p.Name()),
		"matched": grammar.BoolValue(how == stopDone),
		"match":   str(""),
		"data":    str(data),
		"bytes":   num(len(got)),
	}}
	switch how {
	case stopDone:
		match := printable(got[span[0]:span[1]])
		r.Fields["match"] = str(match)
		r.Text = fmt.Sprintf("%s: matched %s after %d bytes", p.Name(), quoteShort(match), len(got))
	case stopMax:
		r.Text = fmt.Sprintf("%s: no match for %s in the first %d bytes (max_bytes): %s", p.Name(), strconv.Quote(pattern), len(got), quoteShort(data))
	default:
		r.Text = fmt.Sprintf("%s: timed out after %d ms without a match for %s (%d bytes read: %s)", p.Name(), ms, strconv.Quote(pattern), len(got), quoteShort(data))
	}
	return r, nil
}

// serial/list

type serialList struct {
	tool
	b *hal.Board
}

func newSerialList(b *hal.Board) *serialList {
	return &serialList{b: b, tool: tool{grammar.ToolSpec{
		Name: "serial/list",
		Doc:  "List the configured serial ports with their device and baud rate.",
	}}}
}

func (t *serialList) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	if err := ctx.Err(); err != nil {
		return tools.Result{}, err
	}
	ports := t.b.Ports()
	names := make([]grammar.Value, len(ports))
	var sb strings.Builder
	if len(ports) == 0 {
		sb.WriteString("no serial ports configured")
	} else {
		w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "NAME\tDEVICE\tBAUD")
		for i, p := range ports {
			names[i] = str(p.Name())
			fmt.Fprintf(w, "%s\t%s\t%d\n", p.Name(), p.Device(), p.Baud())
		}
		w.Flush()
	}
	return tools.Result{
		Text:   strings.TrimRight(sb.String(), "\n"),
		Fields: map[string]grammar.Value{"ports": grammar.ArrayValue(names...)},
	}, nil
}

// reading says when read stops.
type reading struct {
	timeout time.Duration     // overall
	max     int               // bytes
	quiet   time.Duration     // once data came, stop after this long without more; 0: never
	done    func([]byte) bool // stop when it returns true; nil: never
}

type stop int

const (
	stopTimeout stop = iota
	stopMax
	stopQuiet
	stopDone
)

// read reads from c until one of r's conditions, checking ctx at least every
// readSlice.
func read(ctx context.Context, c hal.PortConn, r reading) ([]byte, stop, error) {
	deadline := time.Now().Add(r.timeout)
	chunk := make([]byte, min(r.max, 4096))
	var got []byte
	var last time.Time
	for {
		if err := ctx.Err(); err != nil {
			return got, stopTimeout, err
		}
		if len(got) >= r.max {
			return got, stopMax, nil
		}
		now := time.Now()
		wait := deadline.Sub(now)
		if wait <= 0 {
			return got, stopTimeout, nil
		}
		if r.quiet > 0 && len(got) > 0 {
			left := last.Add(r.quiet).Sub(now)
			if left <= 0 {
				return got, stopQuiet, nil
			}
			wait = min(wait, left)
		}
		if err := c.SetReadTimeout(min(wait, readSlice)); err != nil {
			return got, stopTimeout, err
		}
		n, err := c.Read(chunk[:min(len(chunk), r.max-len(got))])
		if n > 0 {
			got = append(got, chunk[:n]...)
			last = time.Now()
			if r.done != nil && r.done(got) {
				return got, stopDone, nil
			}
		}
		if err != nil {
			return got, stopTimeout, err
		}
	}
}

// printable returns b as a string with the bytes that are not UTF-8 written
// as \xNN, so binary noise on a line survives as readable text.
func printable(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&sb, `\x%02x`, b[0])
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// quoteShort quotes s for a Text line, cut to showBytes.
func quoteShort(s string) string {
	if len(s) <= showBytes {
		return strconv.Quote(s)
	}
	cut := showBytes
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}
