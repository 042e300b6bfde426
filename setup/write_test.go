package setup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
)

// Writing the config changes what setup asks about and keeps the rest of
// the previous file (the dashboard, the policy, the consoles) with their
// comments; the previous file is kept as .bak; what it writes loads.
func TestWriteKeepsOtherSections(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "clawedge.yaml")
	prev := `# my board
data_dir: ./data
board:
  driver: sim
  pins:
    led: {gpio: 17, mode: out}
# the dashboard on the LAN
web:
  listen: "127.0.0.1:8080"

policy:
  owners: ["web:phone"]
telegram:
  token: "${TELEGRAM_TOKEN}"
console: {stdin: false}
`
	os.WriteFile(path, []byte(prev), 0o644)
	old, err := config.Parse([]byte(prev), path, func(string) (string, bool) { return "x", true })
	if err != nil {
		t.Fatal(err)
	}
	w := setupConfig{driver: "sim"}
	w.pins, _ = parseSetupList("lamp=22:out", parsePin)
	if _, err := writeConfig(path, w, old, "", map[string]string{}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	for _, want := range []string{"# the dashboard on the LAN\nweb:\n  listen: \"127.0.0.1:8080\"", "policy:\n  owners: [\"web:phone\"]", "console: {stdin: false}", "lamp: {gpio: 22, mode: out"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(string(got), "led:") || strings.Count(string(got), "telegram:") != 0 || strings.Count(string(got), "\nboard:") != 1 {
		t.Errorf("an asked section kept:\n%s", got)
	}
	if bak, _ := os.ReadFile(path + ".bak"); string(bak) != prev {
		t.Errorf(".bak: %q", bak)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatalf("the written config: %v\n%s", err, got)
	}
	if cfg.Web == nil || cfg.Web.Listen != "127.0.0.1:8080" || len(cfg.Policy.Owners) != 1 || cfg.Board.Pins["lamp"].GPIO != 22 {
		t.Errorf("loaded: %+v %+v", cfg.Web, cfg.Board.Pins)
	}
}
