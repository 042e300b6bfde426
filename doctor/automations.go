package doctor

import (
	"fmt"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
)

// Automations is doctor's line for the automations: how many, the zone,
// and whether the clock can be trusted to fire them.
func Automations(cfg *config.Config) Check {
	c := Check{What: "automations", OK: true}
	loc, err := config.LoadTimezone(cfg.Timezone)
	if err != nil {
		c.OK, c.Info, c.Fix = false, err.Error(), "set timezone: to an IANA name such as Europe/Berlin"
		return c
	}
	c.Info = fmt.Sprintf("%d configured, time zone %s", len(cfg.Automations), loc)
	if !daemon.ClockSynced() {
		c.Warn = true
		c.Info += "; the clock has not been set by NTP since boot: time triggers are held until it is"
		c.Fix = "connect the board to a network with NTP"
	} else if now, built := time.Now(), daemon.BuildTime(); now.Before(built) {
		c.Warn = true
		c.Info += fmt.Sprintf("; the clock (%s) is before this build (%s): time triggers are held until it is set", now.Format(time.DateTime), built.Format(time.DateOnly))
		c.Fix = "let the board synchronise its clock (NTP), or set it: sudo date -s ..."
	}
	return c
}
