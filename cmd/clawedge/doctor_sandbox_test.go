package main

import (
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
)

func TestSandboxCheck(t *testing.T) {
	cfg := config.Default()
	if c := sandboxCheck(cfg, 7); !c.ok || c.warn || !strings.Contains(c.info, "Landlock ABI 7") {
		t.Errorf("with Landlock: %+v", c)
	}
	if c := sandboxCheck(cfg, 0); !c.ok || !c.warn || !strings.Contains(c.info, "NOT confined") && !strings.Contains(c.info, "not confined") {
		t.Errorf("without Landlock, exec off: %+v", c)
	}
	cfg.Exec.Mode = "allowlist"
	if c := sandboxCheck(cfg, 0); c.ok || !strings.Contains(c.info, "refuses every call") {
		t.Errorf("without Landlock, exec on: %+v", c)
	}
	cfg.Exec.AllowWithoutLandlock = true
	if c := sandboxCheck(cfg, 0); !c.ok || !c.warn {
		t.Errorf("without Landlock, accepted: %+v", c)
	}
}
