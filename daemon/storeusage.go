package daemon

import (
	"fmt"
	"strings"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/store"
)

// RetentionOf is the config's bound on what the store keeps.
func RetentionOf(c *config.Config) store.Retention {
	return store.Retention{MaxBytes: int64(c.Store.MaxMB) << 20, MaxAge: time.Duration(c.Store.MaxDays) * 24 * time.Hour}
}

// UsageLine says how full the store is, for status, doctor and sys/status:
// "2.1 MB of a 24.0 MB budget (file 3.0 MB); sensor history 1.2 MB of the
// 3.4 MB reserved for its 3 series; the audit trail reaches back to
// 2026-11-20, and at the last hour's rate (3600 calls) about 12 days; dropped
// so far: #1-#5120 (...)".
func UsageLine(u store.Usage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s of a %s budget (file %s)", modelfiles.FormatBytes(max(u.Live, 0)), modelfiles.FormatBytes(u.Budget), modelfiles.FormatBytes(u.File))
	if u.MaxAge > 0 {
		fmt.Fprintf(&b, ", entries kept at most %d days", int(u.MaxAge.Hours()/24))
	}
	if h := u.History; h.Series > 0 {
		fmt.Fprintf(&b, "; sensor history %s of the %s reserved for its %d series", modelfiles.FormatBytes(h.Bytes), modelfiles.FormatBytes(h.Reserved), h.Series)
		if h.Reserved > u.Budget*3/4 {
			b.WriteString(" (over 3/4 of the budget: raise store.max_mb, or sample fewer sensors)")
		}
	}
	if !u.Oldest.IsZero() {
		fmt.Fprintf(&b, "; the audit trail reaches back to %s", u.Oldest.Local().Format(time.DateOnly))
	}
	if u.PerHour > 0 {
		fmt.Fprintf(&b, ", and at the last hour's rate (%d calls) %s", u.PerHour, u.Reach())
	}
	if u.Dropped.Audit.Count > 0 {
		fmt.Fprintf(&b, "; dropped by retention so far: %s", u.Dropped.Audit)
	}
	return b.String()
}
