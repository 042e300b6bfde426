package vocab

import (
	"strings"
	"testing"
)

func TestCheckPattern(t *testing.T) {
	for _, ok := range []string{"*", "gpio/*", "gpio/write", "weather-kit/forecast_2", "group:readonly", "group:skills", "group:mcp",
		"garage.*", "garage.gpio/*", "garage.gpio/write"} {
		if err := CheckPattern(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for bad, msg := range map[string]string{
		"":               `"" is not a tool pattern: want ns/name, ns/*, BOARD.*, * or a group (group:auto,`,
		"gpio":           `want ns/name, ns/*, BOARD.*, * or a group`,
		"gpio/":          `is not a tool pattern`,
		"/x":             `is not a tool pattern`,
		"gpio/*/x":       `is not a tool pattern`,
		"g pio/x":        `is not a tool pattern`,
		"**":             `is not a tool pattern`,
		"*/read":         `is not a tool pattern`,
		"1x/read":        `is not a tool pattern`,
		"Garage.*":       `is not a tool pattern`,
		"a.b.c/read":     `is not a tool pattern`,
		"garage./read":   `is not a tool pattern`,
		"group:readonli": `"group:readonli" is not a tool pattern: no such group; want one of group:auto, group:exec, group:gpio, group:i2c, group:mcp, group:readonly, group:sensors, group:serial, group:skills, group:spi`,
		"GROUP:gpio":     `is not a tool pattern`,
	} {
		if err := CheckPattern(bad); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", bad, err, msg)
		}
	}
}

func TestPrincipal(t *testing.T) {
	for id, channel := range map[string]string{
		"console": "console/stdin", "pi": "console/stdin", "uid:1000": "control", "telegram:42": "telegram",
		"web:phone": "web", "mcp:claude-desktop": "mcp", "mqtt": "mqtt", "auto:porch-off": "auto",
	} {
		d, err := Principal(id)
		if err != nil || d.Channel != channel {
			t.Errorf("%q: %+v %v, want channel %s", id, d, err, channel)
		}
	}
	for id, msg := range map[string]string{
		"":                 `"" is not a principal: want console, uid:N, telegram:ID, web:NAME, mcp:NAME, mqtt, board:NAME, auto:NAME or a console's user name`,
		"telegram 1":       `is not a principal`,
		"telegram:@ann":    `want telegram:ID`,
		"uid:":             `want uid:N`,
		"web:":             `want web:NAME`,
		"mcp:a b":          `want mcp:NAME`,
		"tg:1":             `no door "tg"`,
		"model:telegram:1": `name "telegram:1"`,
		"goal:3":           `a goal acts with its owner's rights`,
		"9lives":           `is not a principal`,
	} {
		if _, err := Principal(id); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: %v, want %q", id, err, msg)
		}
	}
}

func TestCheckChannel(t *testing.T) {
	for _, ok := range []string{"console", "console/stdin", "console/ttyS0", "control", "telegram", "web", "mcp", "mqtt", "auto"} {
		if err := CheckChannel(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "telegramm", "console/", "telegram/x", "console/tty S0", "uid"} {
		if err := CheckChannel(bad); err == nil || !strings.Contains(err.Error(), "unknown channel") {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// Every group a profile or another group holds is a group; every pattern
// they hold is a pattern.
func TestTablesHoldPatterns(t *testing.T) {
	for name, members := range Profiles {
		for _, p := range members {
			if err := CheckPattern(p); err != nil {
				t.Errorf("profile %s: %v", name, err)
			}
		}
	}
	for g, members := range Groups {
		if !strings.HasPrefix(g, "group:") {
			t.Errorf("group %q", g)
		}
		for _, p := range members {
			if err := CheckPattern(p); err != nil || strings.HasPrefix(p, "group:") {
				t.Errorf("group %s holds %q: %v", g, p, err)
			}
		}
	}
}
