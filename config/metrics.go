package config

import (
	"net"
	"strconv"

	"github.com/goccy/go-yaml/ast"
)

// The Prometheus endpoint (docs/home-assistant.md, "Metrics"):
//
//	metrics: {listen: "127.0.0.1:9464"}
//
// Off while absent. Decoding, validation and the Redacted writer are here.

// Metrics serves Prometheus text at http://<listen>/metrics.
type Metrics struct {
	// Listen is host:port; a loopback address keeps it on the board.
	Listen string `yaml:"listen"`
}

var metricsKeys = []string{"listen"}

func (d *decoder) metrics(n ast.Node, dst **Metrics) {
	if isNull(d.resolveQuiet(n)) {
		return
	}
	m := &Metrics{}
	d.fields(n, "metrics", metricsKeys, func(k string, v ast.Node) {
		d.str(v, "metrics.listen", &m.Listen)
	})
	*dst = m
}

func (d *decoder) validateMetrics(m *Metrics) {
	if m == nil {
		return
	}
	if m.Listen == "" {
		d.missing("metrics.listen", ` (host:port, such as "127.0.0.1:9464")`)
		return
	}
	host, port, err := net.SplitHostPort(m.Listen)
	p, perr := strconv.Atoi(port)
	switch {
	case err != nil:
		d.errf("metrics.listen", "%s is not host:port (such as \"127.0.0.1:9464\" or \":9464\")", d.quote("metrics.listen", m.Listen))
	case perr != nil || p < 1 || p > 65535:
		d.errf("metrics.listen", "port %s is not from 1 to 65535", port)
	case host != "" && net.ParseIP(host) == nil && host != "localhost":
		d.errf("metrics.listen", "%s: the host must be an IP address or localhost (empty: every interface)", d.quote("metrics.listen", m.Listen))
	}
}

func (c *Config) writeMetrics(w *writer) {
	if c.Metrics != nil {
		w.key(0, "metrics")
		w.kv(1, "listen", w.str(c.Metrics.Listen))
	}
}
