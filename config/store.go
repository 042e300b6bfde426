package config

import (
	"math"
	"strconv"

	"github.com/goccy/go-yaml/ast"
)

// How much the store keeps (docs/install.md, "Storage"):
//
//	store: {max_mb: 24, max_days: 90}
//
// Absent: the budget is a quarter of what data_dir's filesystem could give the
// store (2 to 256 MiB) and entries stay while they fit. Decoding, validation
// and the Redacted writer are here.

// Store bounds the audit trail and the model steps in clawedge.db.
type Store struct {
	// MaxMB is the budget of live data in MiB; 0: derived from the free space.
	MaxMB int `yaml:"max_mb"`
	// MaxDays drops entries older than this many days; 0: kept while they fit.
	MaxDays int `yaml:"max_days"`
}

var storeKeys = []string{"max_mb", "max_days"}

func (d *decoder) store(n ast.Node, dst *Store) {
	d.fields(n, "store", storeKeys, func(k string, v ast.Node) {
		switch k {
		case "max_mb":
			d.intIn(v, "store.max_mb", &dst.MaxMB, 1, math.MaxInt32)
		case "max_days":
			d.intIn(v, "store.max_days", &dst.MaxDays, 1, 36500)
		}
	})
}

func (c *Config) writeStore(w *writer) {
	if c.Store == (Store{}) {
		return
	}
	w.key(0, "store")
	if c.Store.MaxMB > 0 {
		w.kv(1, "max_mb", strconv.Itoa(c.Store.MaxMB))
	}
	if c.Store.MaxDays > 0 {
		w.kv(1, "max_days", strconv.Itoa(c.Store.MaxDays))
	}
}
