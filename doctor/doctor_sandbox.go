package doctor

import (
	"fmt"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/sandbox"
)

// pidNamespace says whether sys/exec runs are contained by a PID namespace
// (nil) or why not; tests replace it.
var pidNamespace = func() error { return (&sandbox.Runner{}).Containment() }

// Sandbox says what confinement sys/exec and the local-model runner get
// on this kernel (docs/security.md).
func Sandbox(cfg *config.Config, abi int) Check {
	c := Check{What: "sandbox", OK: true}
	contained := "each run is contained by a PID namespace of its own (nothing it starts outlives it)"
	nsErr := pidNamespace()
	if nsErr != nil {
		contained = fmt.Sprintf("runs are NOT contained by a PID namespace (%v): a child that calls setsid() can outlive its run", nsErr)
	}
	if abi > 0 {
		c.Info = fmt.Sprintf("Landlock ABI %d: sys/exec and the model runner are confined to their paths, with seccomp and rlimits; %s", abi, contained)
		if nsErr != nil {
			c.Warn = true
			c.Fix = "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0), or a container profile that permits clone(CLONE_NEWPID)"
		}
		return c
	}
	c.Info = "Landlock is not available on this kernel: children keep seccomp, rlimits, no-new-privs and a bare environment, but their file access is not confined; " + contained
	c.Fix = "use a kernel with CONFIG_SECURITY_LANDLOCK=y and landlock in lsm= (Linux 5.13 or later)"
	if cfg.Exec.Mode != "deny" && !cfg.Exec.AllowWithoutLandlock {
		c.OK = false
		c.Info += "; sys/exec refuses every call (exec.allow_without_landlock is false)"
		return c
	}
	c.Warn = true
	return c
}
