package daemon

import (
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/tools/sys"
)

// registerExec adds sys/exec unless exec.mode is deny.
func (a *Core) registerExec() error {
	e := a.cfg.Exec
	if e.Mode == "" || e.Mode == "deny" {
		return nil
	}
	x := sys.Exec{Full: e.Mode == "full", Runner: &sandbox.Runner{AllowWithoutLandlock: e.AllowWithoutLandlock, Warn: a.warn},
		Sandbox: sandbox.Spec{Read: e.Paths.Read, Write: e.Paths.Write, Network: e.Network,
			Limits: sandbox.Limits{CPUSeconds: e.Limits.CPUSeconds, MemoryMB: e.Limits.MemoryMB, NProc: e.Limits.NProc,
				FSizeMB: e.Limits.FSizeMB, OutputKB: e.Limits.OutputKB, NoFile: 256}}}
	for _, r := range e.Allow {
		rule, err := sys.NewExecRule(r.Program, r.Args)
		if err != nil {
			return err
		}
		x.Allow = append(x.Allow, rule)
	}
	return sys.RegisterExec(a.reg, x)
}

// warn logs when there is a logger (loadRegistry builds specs without one).
func (a *Core) warn(msg string) {
	if a.log != nil {
		a.log.Warn(msg)
	}
}
