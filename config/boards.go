package config

import (
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/goccy/go-yaml/ast"
)

// Other boards (docs/boards.md):
//
//	boards: {name: hall, listen: "0.0.0.0:8765", url: "https://hall.local:8765", discovery: true, timeout: 10s}
//
// Off while absent; present without listen, this board calls paired boards
// but serves none. Decoding, validation and the writer are here.

// Boards is this board among others: its A2A server and the paired boards.
type Boards struct {
	// Name is how this board names itself to the boards it pairs with
	// (their principal board:NAME for its calls); empty: the host name.
	Name string `yaml:"name"`
	// Listen is host:port of the A2A server (TLS with a pinned
	// self-signed certificate); empty: serve nothing.
	Listen string `yaml:"listen"`
	// URL is the address other boards reach it at (its card's URL, and
	// what discovery announces); empty: https://<host name>.local:<port>.
	URL string `yaml:"url"`
	// Discovery announces this board and finds others by DNS-SD
	// (_clawedge._tcp) on the LAN.
	Discovery bool `yaml:"discovery"`
	// Timeout bounds one call to another board (default 10s).
	Timeout Duration `yaml:"timeout"`
}

// DefaultBoardsTimeout is the default of boards.timeout.
const DefaultBoardsTimeout = Duration(10 * time.Second)

var boardsKeys = []string{"name", "listen", "url", "discovery", "timeout"}

func (d *decoder) boards(n ast.Node, dst **Boards) {
	if isNull(d.resolveQuiet(n)) {
		return
	}
	b := &Boards{Timeout: DefaultBoardsTimeout}
	d.fields(n, "boards", boardsKeys, func(k string, v ast.Node) {
		switch k {
		case "name":
			d.str(v, "boards.name", &b.Name)
		case "listen":
			d.str(v, "boards.listen", &b.Listen)
		case "url":
			d.str(v, "boards.url", &b.URL)
		case "discovery":
			d.boolean(v, "boards.discovery", &b.Discovery)
		case "timeout":
			d.durationAs(v, "boards.timeout", &b.Timeout, "a duration such as 10s")
		}
	})
	*dst = b
}

func (d *decoder) validateBoards(b *Boards) {
	if b == nil {
		return
	}
	if b.Name != "" && !vocab.Board(b.Name) {
		d.errf("boards.name", "%s is not a board's name: a lower-case letter, then lower-case letters, digits, _ and -, at most 32", d.quote("boards.name", b.Name))
	}
	if b.Listen != "" {
		host, port, err := net.SplitHostPort(b.Listen)
		p, perr := strconv.Atoi(port)
		switch {
		case err != nil:
			d.errf("boards.listen", "%s is not host:port (such as \"0.0.0.0:8765\" or \":8765\")", d.quote("boards.listen", b.Listen))
		case perr != nil || p < 1 || p > 65535:
			d.errf("boards.listen", "port %s is not from 1 to 65535", port)
		case host != "" && net.ParseIP(host) == nil && host != "localhost":
			d.errf("boards.listen", "%s: the host must be an IP address or localhost (empty: every interface)", d.quote("boards.listen", b.Listen))
		}
	}
	if b.URL != "" {
		if u, err := url.Parse(b.URL); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" {
			d.errf("boards.url", "%s is not an https://host:port URL", d.quote("boards.url", b.URL))
		}
		if b.Listen == "" {
			d.errf("boards.url", "boards.url without boards.listen: nothing serves it")
		}
	}
	if b.Discovery && b.Listen == "" {
		d.errf("boards.discovery", "boards.discovery announces the A2A server: set boards.listen too")
	}
	if b.Timeout < Duration(time.Second) || b.Timeout > Duration(5*time.Minute) {
		d.errf("boards.timeout", "%s is not from 1s to 5m", b.Timeout)
	}
}

func (c *Config) writeBoards(w *writer) {
	b := c.Boards
	if b == nil {
		return
	}
	w.key(0, "boards")
	if b.Name != "" {
		w.kv(1, "name", w.str(b.Name))
	}
	if b.Listen != "" {
		w.kv(1, "listen", w.str(b.Listen))
	}
	if b.URL != "" {
		w.kv(1, "url", w.str(b.URL))
	}
	if b.Discovery {
		w.kv(1, "discovery", "true")
	}
	if b.Timeout != DefaultBoardsTimeout {
		w.kv(1, "timeout", b.Timeout.String())
	}
}
