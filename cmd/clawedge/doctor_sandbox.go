package main

import (
	"fmt"

	"github.com/clawedge/clawedge/config"
)

// sandboxCheck says what confinement sys/exec and the local-model runner get
// on this kernel (docs/security.md).
func sandboxCheck(cfg *config.Config, abi int) check {
	c := check{what: "sandbox", ok: true}
	if abi > 0 {
		c.info = fmt.Sprintf("Landlock ABI %d: sys/exec and the model runner are confined to their paths, with seccomp and rlimits", abi)
		return c
	}
	c.info = "Landlock is not available on this kernel: children keep seccomp, rlimits, no-new-privs and a bare environment, but their file access is not confined"
	c.fix = "use a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm= (Linux 5.13 or later)"
	if cfg.Exec.Mode != "deny" && !cfg.Exec.AllowWithoutLandlock {
		c.ok = false
		c.info += "; sys/exec refuses every call (exec.allow_without_landlock is false)"
		return c
	}
	c.warn = true
	return c
}
