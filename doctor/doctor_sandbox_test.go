package doctor

import (
	"errors"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
)

func TestSandboxCheck(t *testing.T) {
	defer func(f func() error) { pidNamespace = f }(pidNamespace)
	pidNamespace = func() error { return nil }
	cfg := config.Default()
	if c := Sandbox(cfg, 7); !c.OK || c.Warn || !strings.Contains(c.Info, "Landlock ABI 7") || !strings.Contains(c.Info, "contained by a PID namespace") {
		t.Errorf("with Landlock: %+v", c)
	}
	if c := Sandbox(cfg, 0); !c.OK || !c.Warn || !strings.Contains(c.Info, "NOT confined") && !strings.Contains(c.Info, "not confined") {
		t.Errorf("without Landlock, exec off: %+v", c)
	}
	cfg.Exec.Mode = "allowlist"
	if c := Sandbox(cfg, 0); c.OK || !strings.Contains(c.Info, "refuses every call") {
		t.Errorf("without Landlock, exec on: %+v", c)
	}
	cfg.Exec.AllowWithoutLandlock = true
	if c := Sandbox(cfg, 0); !c.OK || !c.Warn {
		t.Errorf("without Landlock, accepted: %+v", c)
	}
	// A kernel that refuses the namespace: a warning that says so, and why.
	pidNamespace = func() error { return errors.New("a PID namespace: operation not permitted") }
	if c := Sandbox(cfg, 7); !c.OK || !c.Warn || !strings.Contains(c.Info, "NOT contained by a PID namespace (a PID namespace: operation not permitted)") || c.Fix == "" {
		t.Errorf("without the namespace: %+v", c)
	}
}

// The real check, on this machine, with this test binary as the helper
// (its TestMain calls sandbox.Main, whose probe mode exits at once).
func TestSandboxCheckContainment(t *testing.T) {
	if err := pidNamespace(); err != nil {
		t.Skipf("runs are not contained here: %v", err)
	}
	if c := Sandbox(config.Default(), 7); !strings.Contains(c.Info, "each run is contained by a PID namespace") {
		t.Errorf("%+v", c)
	}
}
