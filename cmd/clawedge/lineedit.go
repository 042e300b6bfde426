package main

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// lineEditor gives chat at a terminal what a shell has: the line is edited
// in place (left and right arrows, Home and End, backspace and delete,
// Ctrl-U, Ctrl-W) and the up and down arrows bring earlier lines back. It
// puts the terminal in raw mode and hands the console finished lines through
// a pipe, so the console itself stays line-oriented. Ctrl-D on an empty line
// ends the input; Ctrl-C drops the line, and on an empty line ends it too.
type lineEditor struct {
	in      *bufio.Reader
	out     io.Writer
	prompt  string
	history []string
}

const maxHistory = 500

// startLineEditor switches tty to raw mode and returns the reader of
// finished lines and the function that restores the terminal. ok is false
// when tty is not a terminal: then nothing changed.
func startLineEditor(tty *os.File, out io.Writer, prompt string) (lines io.Reader, restore func(), ok bool) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, nil, false
	}
	raw := *old
	// Characters one at a time, no echo, no signals from Ctrl-C; output
	// processing (LF to CR LF) stays on so that replies print as before.
	raw.Lflag &^= unix.ICANON | unix.ECHO | unix.ISIG | unix.IEXTEN
	raw.Iflag &^= unix.IXON | unix.ICRNL
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(fd, unix.TCSETS, &raw) != nil {
		return nil, nil, false
	}
	pr, pw := io.Pipe()
	e := &lineEditor{in: bufio.NewReader(tty), out: out, prompt: prompt}
	go func() {
		for {
			line, err := e.readLine()
			if err != nil {
				pw.Close()
				return
			}
			if _, err := io.WriteString(pw, line+"\n"); err != nil {
				return
			}
		}
	}()
	return pr, func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, true
}

// readLine edits one line; io.EOF when the person ends the input.
func (e *lineEditor) readLine() (string, error) {
	var buf []rune
	pos := 0
	hist := len(e.history) // the entry shown; len(history) is the new line
	draft := ""
	redraw := func() {
		// Back to the start of the line, the prompt and the text, clear
		// what is left, then the cursor back to pos.
		s := "\r" + e.prompt + string(buf) + "\x1b[K"
		if back := len(buf) - pos; back > 0 {
			s += "\x1b[" + strconv.Itoa(back) + "D"
		}
		e.write(s)
	}
	for {
		r, _, err := e.in.ReadRune()
		if err != nil {
			return "", err
		}
		switch r {
		case '\r', '\n':
			e.write("\r\n")
			line := string(buf)
			if strings.TrimSpace(line) != "" && (len(e.history) == 0 || e.history[len(e.history)-1] != line) {
				e.history = append(e.history, line)
				if len(e.history) > maxHistory {
					e.history = e.history[1:]
				}
			}
			return line, nil
		case 4: // Ctrl-D: end of input on an empty line, else delete under the cursor
			if len(buf) == 0 {
				e.write("\r\n")
				return "", io.EOF
			}
			if pos < len(buf) {
				buf = append(buf[:pos], buf[pos+1:]...)
				redraw()
			}
		case 3: // Ctrl-C
			e.write("^C\r\n")
			if len(buf) == 0 {
				return "", io.EOF
			}
			buf, pos = buf[:0], 0
			e.write(e.prompt)
		case 0x7f, 8: // backspace
			if pos > 0 {
				buf = append(buf[:pos-1], buf[pos:]...)
				pos--
				redraw()
			}
		case 0x15: // Ctrl-U: the whole line
			buf, pos = buf[:0], 0
			redraw()
		case 0x17: // Ctrl-W: the word before the cursor
			start := pos
			for start > 0 && buf[start-1] == ' ' {
				start--
			}
			for start > 0 && buf[start-1] != ' ' {
				start--
			}
			buf = append(buf[:start], buf[pos:]...)
			pos = start
			redraw()
		case 1: // Ctrl-A
			pos = 0
			redraw()
		case 5: // Ctrl-E
			pos = len(buf)
			redraw()
		case 0x1b:
			key := e.escape()
			switch key {
			case 'A', 'B': // up, down: history
				if key == 'A' && hist > 0 || key == 'B' && hist < len(e.history) {
					if hist == len(e.history) {
						draft = string(buf)
					}
					if key == 'A' {
						hist--
					} else {
						hist++
					}
					text := draft
					if hist < len(e.history) {
						text = e.history[hist]
					}
					buf = []rune(text)
					pos = len(buf)
					redraw()
				}
			case 'C':
				if pos < len(buf) {
					pos++
					redraw()
				}
			case 'D':
				if pos > 0 {
					pos--
					redraw()
				}
			case 'H':
				pos = 0
				redraw()
			case 'F':
				pos = len(buf)
				redraw()
			case '3': // Delete
				if pos < len(buf) {
					buf = append(buf[:pos], buf[pos+1:]...)
					redraw()
				}
			}
		default:
			if r < 0x20 || r == utf8.RuneError {
				continue // other control characters are noise
			}
			if len(buf) >= 64<<10 {
				continue // the console refuses longer lines anyway
			}
			buf = append(buf[:pos], append([]rune{r}, buf[pos:]...)...)
			pos++
			if pos == len(buf) {
				e.write(string(r))
			} else {
				redraw()
			}
		}
	}
}

// escape reads the rest of an escape sequence and names its key: 'A' to
// 'D' for the arrows, 'H' and 'F' for Home and End, '3' for Delete, 0 for
// anything else.
func (e *lineEditor) escape() byte {
	b, err := e.in.ReadByte()
	if err != nil || b != '[' && b != 'O' {
		return 0
	}
	var params []byte
	for {
		c, err := e.in.ReadByte()
		if err != nil {
			return 0
		}
		if c >= 0x40 && c <= 0x7e {
			switch {
			case c == '~' && string(params) == "3":
				return '3'
			case c == '~' && (string(params) == "1" || string(params) == "7"):
				return 'H'
			case c == '~' && (string(params) == "4" || string(params) == "8"):
				return 'F'
			case len(params) == 0 && strings.IndexByte("ABCDHF", c) >= 0:
				return c
			}
			return 0
		}
		params = append(params, c)
	}
}

func (e *lineEditor) write(s string) { io.WriteString(e.out, s) }
