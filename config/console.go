package config

import (
	"path/filepath"
	"strconv"

	"github.com/goccy/go-yaml/ast"
)

// The console section: the chat on standard input and on a serial line.
//
//	console:
//	  stdin: true
//	  serial: {device: /dev/ttyS0, baud: 115200}
//
// Decoding, validation and the Redacted writer of the section are all in
// this file.

// Console configures the local operator channels.
type Console struct {
	// Stdin enables the chat on standard input; nil means true. It is a
	// pointer so that "stdin: false" in a file can be told from absence.
	Stdin  *bool          `yaml:"stdin"`
	Serial *SerialConsole `yaml:"serial"`
}

// SerialConsole is a serial line that behaves like the stdin console, for
// headless boards reached through a USB-serial cable.
type SerialConsole struct {
	Device string `yaml:"device"`
	Baud   int    `yaml:"baud"`
}

// ConsoleStdin reports whether the stdin chat is enabled (the default).
func (c *Config) ConsoleStdin() bool {
	return c.Console.Stdin == nil || *c.Console.Stdin
}

// defaultConsole has the chat on standard input and no serial console.
func defaultConsole() Console {
	stdin := true
	return Console{Stdin: &stdin}
}

// The keys of the section.
var (
	consoleKeys = []string{"stdin", "serial"}
	serialKeys  = []string{"device", "baud"}
)

func (d *decoder) console(n ast.Node, c *Console) {
	d.fields(n, "console", consoleKeys, func(k string, v ast.Node) {
		switch k {
		case "stdin":
			b := c.Stdin == nil || *c.Stdin
			d.boolean(v, "console.stdin", &b)
			c.Stdin = &b
		case "serial":
			s := &SerialConsole{Baud: defaultBaud}
			present := !isNull(d.resolveQuiet(v))
			d.fields(v, "console.serial", serialKeys, func(k string, v ast.Node) {
				switch k {
				case "device":
					d.str(v, "console.serial.device", &s.Device)
				case "baud":
					d.intField(v, "console.serial.baud", &s.Baud)
				}
			})
			if present {
				c.Serial = s
			}
		}
	})
}

func (d *decoder) validateConsole(c *Console, b *Board) {
	s := c.Serial
	if s == nil {
		return
	}
	const path = "console.serial"
	switch {
	case s.Device == "" && !d.has(path+".device"):
		d.missing(path+".device", " (such as /dev/ttyS0)")
	case s.Device == "":
		d.errf(path+".device", "must not be empty")
	default:
		// One process cannot both chat and run tools over the same
		// line: tool traffic would land in the console and vice versa.
		for _, name := range byPosition(d, "board.ports.", b.Ports) {
			if filepath.Clean(b.Ports[name].Device) == filepath.Clean(s.Device) {
				d.errf(path+".device", "%s is also board port %q; a serial device is either the console or a port, not both", d.quote(path+".device", s.Device), name)
				break
			}
		}
	}
	d.checkBaud(path+".baud", s.Baud)
}

// writeConsole writes the console section for Redacted.
func (c *Config) writeConsole(w *writer) {
	w.key(0, "console")
	w.kv(1, "stdin", strconv.FormatBool(c.ConsoleStdin()))
	if s := c.Console.Serial; s != nil {
		w.key(1, "serial")
		w.kv(2, "device", w.str(s.Device))
		w.kv(2, "baud", strconv.Itoa(s.Baud))
	}
}
