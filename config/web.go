package config

import (
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The dashboard on the LAN (docs/web.md):
//
//	web: {listen: "0.0.0.0:8080", names: [clawedge.local], tls_cert: /etc/clawedge/web.crt, tls_key: /etc/clawedge/web.key,
//	      session_idle: 7d, session_max: 90d}
//
// Off while absent. Decoding, validation and the writer are here.

// Web serves the dashboard and its JSON API at http(s)://<listen>/.
type Web struct {
	// Listen is host:port; a loopback address keeps it on the board.
	Listen string `yaml:"listen"`
	// Names are the host names browsers may use besides the listen address
	// and IP literals (the board's mDNS name): any other Host header is
	// refused, so a DNS-rebinding page cannot reach the API.
	Names []string `yaml:"names"`
	// TLSCert and TLSKey, both or neither: PEM files; with them the
	// dashboard is https and its cookie Secure.
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
	// SessionIdle ends a paired browser's session unused this long, and
	// SessionMax any session this long after its pairing (default 7d, 90d;
	// "7d", "12h", "90m").
	SessionIdle Duration `yaml:"session_idle"`
	SessionMax  Duration `yaml:"session_max"`
}

// The defaults of web.session_idle and web.session_max.
const (
	DefaultWebSessionIdle = Duration(7 * 24 * time.Hour)
	DefaultWebSessionMax  = Duration(90 * 24 * time.Hour)
)

var webKeys = []string{"listen", "names", "tls_cert", "tls_key", "session_idle", "session_max"}

func (d *decoder) web(n ast.Node, dst **Web) {
	if isNull(d.resolveQuiet(n)) {
		return
	}
	w := &Web{SessionIdle: DefaultWebSessionIdle, SessionMax: DefaultWebSessionMax}
	d.fields(n, "web", webKeys, func(k string, v ast.Node) {
		switch k {
		case "listen":
			d.str(v, "web.listen", &w.Listen)
		case "names":
			w.Names = d.strings(v, "web.names")
		case "tls_cert":
			d.str(v, "web.tls_cert", &w.TLSCert)
		case "tls_key":
			d.str(v, "web.tls_key", &w.TLSKey)
		case "session_idle":
			d.durationAs(v, "web.session_idle", &w.SessionIdle, "a duration such as 7d, 12h or 90m")
		case "session_max":
			d.durationAs(v, "web.session_max", &w.SessionMax, "a duration such as 7d, 12h or 90m")
		}
	})
	*dst = w
}

// daysText writes v as days when it is whole days, else as a Duration.
func daysText(v Duration) string {
	if day := Duration(24 * time.Hour); v > 0 && v%day == 0 {
		return strconv.FormatInt(int64(v/day), 10) + "d"
	}
	return v.String()
}

func (d *decoder) validateWeb(w *Web) {
	if w == nil {
		return
	}
	if w.Listen == "" {
		d.missing("web.listen", ` (host:port, such as "0.0.0.0:8080")`)
	} else {
		host, port, err := net.SplitHostPort(w.Listen)
		p, perr := strconv.Atoi(port)
		switch {
		case err != nil:
			d.errf("web.listen", "%s is not host:port (such as \"0.0.0.0:8080\" or \":8080\")", d.quote("web.listen", w.Listen))
		case perr != nil || p < 1 || p > 65535:
			d.errf("web.listen", "port %s is not from 1 to 65535", port)
		case host != "" && net.ParseIP(host) == nil && host != "localhost":
			d.errf("web.listen", "%s: the host must be an IP address or localhost (empty: every interface)", d.quote("web.listen", w.Listen))
		}
	}
	for _, n := range w.Names {
		if n == "" || len(n) > 253 || strings.ContainsAny(n, ":/ \t*") {
			d.errf("web.names", "%q is not a host name (such as clawedge.local; no port, no wildcard)", n)
		}
	}
	if (w.TLSCert == "") != (w.TLSKey == "") {
		d.errf("web.tls_cert", "tls_cert and tls_key go together: give both PEM files, or neither for plain http")
	}
	switch {
	case w.SessionIdle < Duration(time.Minute):
		d.errf("web.session_idle", "must be at least 1m, found %s", daysText(w.SessionIdle))
	case w.SessionMax < Duration(time.Minute):
		d.errf("web.session_max", "must be at least 1m, found %s", daysText(w.SessionMax))
	case w.SessionIdle > w.SessionMax:
		d.errf("web.session_idle", "%s is longer than session_max (%s): a session would end at session_max first", daysText(w.SessionIdle), daysText(w.SessionMax))
	}
}

func (c *Config) writeWeb(w *writer) {
	if c.Web == nil {
		return
	}
	w.key(0, "web")
	w.kv(1, "listen", w.str(c.Web.Listen))
	if len(c.Web.Names) > 0 {
		w.key(1, "names")
		for _, n := range c.Web.Names {
			w.item(2, w.str(n))
		}
	}
	w.kvOmit(1, "tls_cert", c.Web.TLSCert)
	w.kvOmit(1, "tls_key", c.Web.TLSKey)
	if c.Web.SessionIdle != DefaultWebSessionIdle {
		w.kv(1, "session_idle", daysText(c.Web.SessionIdle))
	}
	if c.Web.SessionMax != DefaultWebSessionMax {
		w.kv(1, "session_max", daysText(c.Web.SessionMax))
	}
}
