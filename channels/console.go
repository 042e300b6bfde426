package channels

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/clawedge/clawedge/internal/termsafe"
)

// MaxLineBytes bounds one console line; the command language refuses longer input anyway.
const MaxLineBytes = 64 << 10

// Console serves one line-oriented stream: each line in, its reply out, strictly
// in order. It is used for stdin and for serial lines alike.
type Console struct {
	Handler Handler
	Channel string // "console/stdin"
	User    string // who is on this console, for the audit trail
	Prompt  string // written before each line; "" for none (piped input)
	// Terminal turns on what a person at a serial terminal needs: typed
	// characters are echoed, backspace and Ctrl-U edit the line, Ctrl-C drops it,
	// and lines end with CR LF.
	Terminal bool
}

// Serve reads lines from r until EOF, an error, or ctx is done, and writes each
// reply to w. EOF is a normal end and returns nil once every reply is written.
//
// Lines are answered one at a time, in order, with one exception: while a line's
// answer is being produced (an agent turn, which may wait for a person), an
// `approve ID` or `deny ID` line is answered at once, since the turn may be waiting
// for exactly that. Other lines typed meanwhile wait their turn.
func (c *Console) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lockedWriter{w: bufio.NewWriter(w)}
	eol := "\n"
	if c.Terminal {
		eol = "\r\n"
	}
	lines := make(chan lineOrErr, 16)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(lines)
		lr := lineReader{in: bufio.NewReader(r), echo: out, terminal: c.Terminal, eol: eol}
		for {
			line, err := lr.next()
			select {
			case lines <- lineOrErr{line, err}:
			case <-stop:
				return
			}
			if err != nil && !errors.Is(err, errLineTooLong) {
				return
			}
		}
	}()

	var queued []lineOrErr
	for {
		if c.Prompt != "" {
			out.WriteString(c.Prompt)
		}
		if err := out.Flush(); err != nil {
			return err
		}
		var l lineOrErr
		if len(queued) > 0 {
			l, queued = queued[0], queued[1:]
		} else {
			select {
			case l = <-lines:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		line, err := l.line, l.err
		if errors.Is(err, errLineTooLong) {
			out.WriteString(fmt.Sprintf("error: line longer than %d bytes, ignored%s", MaxLineBytes, eol))
			continue
		}
		if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
			if errors.Is(err, io.EOF) {
				return out.Flush()
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.answer(ctx, out, line, eol)
		}()
		// While the answer is produced, approvals are answered at once.
	wait:
		for {
			select {
			case <-done:
				break wait
			case m, ok := <-lines:
				if !ok {
					lines = nil
					continue
				}
				if m.err == nil && IsApproval(m.line) {
					c.answer(ctx, out, m.line, eol)
					continue
				}
				queued = append(queued, m)
			}
		}
		if errors.Is(err, io.EOF) { // a last line without a newline still counts
			return out.Flush()
		}
	}
}

type lineOrErr struct {
	line string
	err  error
}

// answer writes the reply to one line.
func (c *Console) answer(ctx context.Context, out *lockedWriter, line, eol string) {
	msg := Message{Channel: c.Channel, User: c.User, Text: line}
	var resp Response
	emitted := false
	if sh, ok := c.Handler.(StreamHandler); ok {
		resp = sh.RespondStream(ctx, msg, func(s string) {
			emitted = true
			s = termsafe.String(s)
			if c.Terminal {
				s = strings.ReplaceAll(s, "\n", "\r\n")
			}
			out.WriteString(s)
			out.Flush()
		})
	} else {
		resp = c.Handler.Respond(ctx, msg)
	}
	// A reply holds text from outside (a tool's output, an MCP server's,
	// a model's): its control characters are escaped, the terminal obeys
	// them.
	reply := termsafe.String(resp.Text)
	switch {
	case resp.Streamed:
		out.WriteString(eol)
	case reply != "":
		if emitted { // a stream that failed part way: its error on a line of its own
			out.WriteString(eol)
		}
		if c.Terminal {
			reply = strings.ReplaceAll(reply, "\n", "\r\n")
		}
		out.WriteString(reply + eol)
	}
	out.Flush()
}

// lockedWriter serializes the writes of a reply, of an approval answered meanwhile,
// and of a terminal's echo.
type lockedWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lockedWriter) WriteString(s string) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.WriteString(s)
}

func (l *lockedWriter) WriteByte(b byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.WriteByte(b)
}

func (l *lockedWriter) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}

var errLineTooLong = errors.New("line too long")

// lineReader splits input into lines, doing the little line editing a serial
// terminal needs. CR, LF and CR LF all end a line.
type lineReader struct {
	in       *bufio.Reader
	echo     *lockedWriter
	terminal bool
	eol      string
	afterCR  bool
	escape   int // where we are in an escape sequence: 0 none, 1 after ESC, 2 inside CSI
}

func (l *lineReader) next() (string, error) {
	var buf []byte
	tooLong := false
	for {
		b, err := l.in.ReadByte()
		if err != nil {
			return string(buf), err
		}
		wasCR := l.afterCR
		l.afterCR = b == '\r'
		if l.terminal && l.skipEscape(b) {
			continue
		}
		switch {
		case b == '\n' && wasCR:
			continue // the LF of a CR LF pair
		case b == '\r' || b == '\n':
			if l.terminal {
				l.echo.WriteString(l.eol)
			}
			if tooLong {
				return "", errLineTooLong
			}
			return string(buf), nil
		case !l.terminal:
		case b == 0x7f || b == 0x08: // backspace: drop one whole UTF-8 character
			if len(buf) > 0 {
				_, n := utf8.DecodeLastRune(buf)
				buf = buf[:len(buf)-n]
				l.echo.WriteString("\b \b")
				l.echo.Flush()
			}
			continue
		case b == 0x15: // Ctrl-U: kill the line
			l.echo.WriteString(strings.Repeat("\b \b", utf8.RuneCount(buf)))
			l.echo.Flush()
			buf = buf[:0]
			continue
		case b == 0x03: // Ctrl-C: abandon the line
			l.echo.WriteString("^C" + l.eol)
			l.echo.Flush()
			buf, tooLong = buf[:0], false
			continue
		case b < 0x20 && b != '\t':
			continue // other control characters are noise on a console
		default:
			l.echo.WriteByte(b)
			if l.in.Buffered() == 0 {
				l.echo.Flush()
			}
		}
		if len(buf) >= MaxLineBytes {
			tooLong = true
			continue
		}
		buf = append(buf, b)
	}
}

// skipEscape swallows terminal escape sequences (arrow keys send ESC [ A): we
// have no history or cursor movement, and their bytes must not end up in a line.
func (l *lineReader) skipEscape(b byte) bool {
	switch l.escape {
	case 1: // after ESC: '[' and 'O' start a sequence, anything else ends it
		l.escape = 0
		if b == '[' || b == 'O' {
			l.escape = 2
		}
		return true
	case 2: // parameters until a final byte 0x40..0x7e
		if b >= 0x40 && b <= 0x7e {
			l.escape = 0
		}
		return true
	}
	if b == 0x1b {
		l.escape = 1
		return true
	}
	return false
}
