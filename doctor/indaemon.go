package doctor

import (
	"os"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/sandbox"
)

// InDaemon are the checks of doctor that make sense inside the running
// daemon, as the dashboard's overview shows them. Left out are those that
// would open what the daemon holds (the store, the board, the ports), dial
// the daemon itself (MCP states), rebuild the memory index, or wait on the
// network (Telegram, MQTT, the remote models): a page must load in
// milliseconds.
func InDaemon(cfg *config.Config) []web.Finding {
	checks := []Check{DataDir(cfg.DataDir), Automations(cfg)}
	checks = append(checks, Skills(cfg, os.Geteuid())...)
	if m := cfg.Models.Local; m != nil {
		checks = append(checks, LocalModel(m, localmodel.FindRunner, "/proc/meminfo")...)
	}
	checks = append(checks, Sandbox(cfg, sandbox.LandlockABI()), WiFi(cfg.Network),
		Clock(time.Now(), InstalledAt(), KernelSynced), Disk(cfg.DataDir, syscall.Statfs))
	out := make([]web.Finding, 0, len(checks))
	for _, c := range checks {
		status := "ok"
		switch {
		case !c.OK:
			status = "fail"
		case c.Warn:
			status = "warn"
		}
		out = append(out, web.Finding{What: c.What, Status: status, Info: c.Info, Fix: c.Fix})
	}
	return out
}
