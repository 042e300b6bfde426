package config

import (
	"net"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// The dashboard on the LAN (docs/web.md):
//
//	web: {listen: "0.0.0.0:8080", names: [clawedge.local], tls_cert: /etc/clawedge/web.crt, tls_key: /etc/clawedge/web.key}
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
}

var webKeys = []string{"listen", "names", "tls_cert", "tls_key"}

func (d *decoder) web(n ast.Node, dst **Web) {
	if isNull(d.resolveQuiet(n)) {
		return
	}
	w := &Web{}
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
		}
	})
	*dst = w
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
}
