package config

import (
	"encoding/base64"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// Updates (docs/update.md):
//
//	update: {url: "https://example.org/clawedge/stable/", key: "ed25519:<base64>"}
//
// key adds a trusted signing key to the one the image was built with; url
// is where `clawedge update` looks when given none. Decoding, validation and
// the Redacted writer are here.

// Update configures signed A/B updates.
type Update struct {
	URL string `yaml:"url"`
	Key string `yaml:"key"`
}

var updateKeys = []string{"url", "key"}

func (d *decoder) update(n ast.Node, dst **Update) {
	if isNull(d.resolveQuiet(n)) {
		return
	}
	u := &Update{}
	d.fields(n, "update", updateKeys, func(k string, v ast.Node) {
		switch k {
		case "url":
			d.str(v, "update.url", &u.URL)
		case "key":
			d.str(v, "update.key", &u.Key)
		}
	})
	*dst = u
}

func (d *decoder) validateUpdate(u *Update) {
	if u == nil {
		return
	}
	if u.URL != "" && !strings.HasPrefix(u.URL, "https://") && !strings.HasPrefix(u.URL, "http://") {
		d.errf("update.url", "%s is not an http(s) URL", d.quote("update.url", u.URL))
	}
	// The update package parses the key when it is used; here only its
	// shape, so that a typo is found by config check, with line and column.
	if u.Key != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(u.Key, "ed25519:"))
		if !strings.HasPrefix(u.Key, "ed25519:") || err != nil || len(b) != 32 {
			d.errf("update.key", "%s: want \"ed25519:<base64 of 32 bytes>\" (clawedge update keygen writes it)", d.quote("update.key", u.Key))
		}
	}
}

func (c *Config) writeUpdate(w *writer) {
	if c.Update != nil {
		w.key(0, "update")
		if c.Update.URL != "" {
			w.kv(1, "url", w.str(c.Update.URL))
		}
		if c.Update.Key != "" {
			w.kv(1, "key", w.str(c.Update.Key))
		}
	}
}
