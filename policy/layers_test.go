package policy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// layered is the policy the table runs against: every layer has something to say.
func layered(profile, execMode string, clock *time.Time) *Policy {
	return &Policy{
		Default:  Allow,
		Tools:    map[string]Action{"gpio/pulse": Ask, "sys/exec": Ask},
		Channels: map[string]map[string]Action{"telegram": {"i2c/*": Deny}},
		Profile:  profile,
		Users: map[string]map[string]Action{
			"telegram:9":   {"group:gpio": Deny},
			"telegram:123": {"sys/exec": Allow},
		},
		Automations: map[string]map[string]Action{"porch": {"*": Deny, "gpio/write": Allow}},
		Elevated:    []string{"group:exec"},
		Owners:      []string{"telegram:123"},
		ExecMode:    execMode,
		Elevation:   &Elevation{Now: func() time.Time { return *clock }},
		Explicit:    map[string]bool{"everything": true},
	}
}

func TestExplainTable(t *testing.T) {
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	type row struct {
		profile, exec, channel, user, tool string
		elevated                           bool
		want                               Action
		decided                            string // "" when every layer allowed
	}
	rows := []row{
		{"full", "allowlist", "telegram", "telegram:5", "gpio/write", false, Allow, ""},
		{"minimal", "allowlist", "telegram", "telegram:5", "gpio/write", false, Deny, "profile"},
		{"minimal", "allowlist", "telegram", "telegram:5", "gpio/read", false, Allow, ""},
		{"hardware", "allowlist", "telegram", "telegram:5", "sys/exec", false, Deny, "profile"},
		{"full", "allowlist", "telegram", "telegram:5", "i2c/read", false, Deny, "rules"},
		{"full", "allowlist", "console/stdin", "console", "i2c/read", false, Allow, ""},
		{"full", "allowlist", "telegram", "telegram:5", "auto/add", false, Ask, "rules"}, // risky: "*" does not grant it
		{"full", "allowlist", "telegram", "telegram:5", "goal/add", false, Ask, "rules"}, // risky too: a goal acts later
		{"full", "allowlist", "telegram", "telegram:9 (@bob)", "gpio/read", false, Deny, "user"},
		{"full", "allowlist", "telegram", "telegram:5", "gpio/pulse", false, Ask, "rules"},
		{"full", "allowlist", "auto", "auto:porch", "gpio/write", false, Allow, ""},
		{"full", "allowlist", "auto", "auto:porch", "gpio/read", false, Deny, "automation"},
		{"full", "allowlist", "telegram", "telegram:123", "sys/exec", false, Deny, "elevated"},
		{"full", "allowlist", "telegram", "telegram:123", "sys/exec", true, Ask, "rules"},
		{"full", "deny", "telegram", "telegram:123", "sys/exec", true, Deny, "exec"},
		{"full", "allowlist", "telegram", "telegram:5", "everything/echo", false, Deny, "rules"},
	}
	for _, r := range rows {
		clock := now
		p := layered(r.profile, r.exec, &clock)
		if r.elevated {
			if _, err := p.Elevate(r.user, 10*time.Minute); err != nil {
				t.Fatalf("%+v: %v", r, err)
			}
		}
		d := p.Explain(tools.Caller{Channel: r.channel, User: r.user, Actor: tools.Model}, r.tool)
		if d.Action != r.want || d.Decided != r.decided {
			t.Errorf("%+v: %s decided by %q (%s), want %s by %q\n%v", r, d.Action, d.Decided, d.Why, r.want, r.decided, d.Verdicts)
		}
	}
}

// Every combination of layers and actors: the decision is the first deny,
// else the first ask, of the layers that hold the actor (layersOf); a
// person's own command is held by no profile, channel rule or elevation.
func TestExplainEveryCombination(t *testing.T) {
	now := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	names := []string{"gpio/read", "gpio/write", "gpio/pulse", "serial/send", "i2c/read", "sys/status", "sys/exec", "auto/add", "everything/echo"}
	n := 0
	for _, profile := range []string{"", "minimal", "hardware", "full"} {
		for _, execMode := range []string{"deny", "allowlist", "full"} {
			for _, channel := range []string{"telegram", "console/stdin", "control", "auto", "mcp", "mqtt"} {
				for _, user := range []string{"", "telegram:5", "telegram:9", "telegram:123", "auto:porch"} {
					for _, actor := range []tools.Actor{tools.Person, tools.Model, tools.Program, tools.Automation} {
						for _, elevated := range []bool{false, true} {
							clock := now
							p := layered(profile, execMode, &clock)
							if elevated {
								p.Elevate(user, time.Minute)
							}
							for _, tool := range names {
								n++
								d := p.Explain(tools.Caller{Channel: channel, User: user, Actor: actor}, tool)
								want, decided := Allow, ""
								for _, a := range []Action{Deny, Ask} {
									for _, v := range d.Verdicts {
										if v.Action == a && v.Layer != "approval" {
											want, decided = a, v.Layer
											break
										}
									}
									if decided != "" {
										break
									}
								}
								where := fmt.Sprintf("profile %q exec %s %s %s %s elevated %v %s", profile, execMode, channel, user, actor, elevated, tool)
								if d.Action != want || d.Decided != decided {
									t.Fatalf("%s: %s by %q, want %s by %q", where, d.Action, d.Decided, want, decided)
								}
								for _, v := range d.Verdicts {
									if v.Layer != "approval" && !slices.Contains(layersOf[actor], v.Layer) {
										t.Fatalf("%s: layer %s held a %s", where, v.Layer, actor)
									}
								}
								if p.Offered(tools.Caller{Channel: channel, User: user, Actor: actor}, tool) != (d.Action != Deny) {
									t.Fatalf("%s: offered disagrees with %s", where, d.Action)
								}
							}
						}
					}
				}
			}
		}
	}
	if n < 10000 {
		t.Fatalf("only %d combinations", n)
	}
}

func TestElevateOnlyOwnersAndTheWindowCloses(t *testing.T) {
	clock := time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC)
	p := layered("full", "full", &clock)
	if _, err := p.Elevate("telegram:9", time.Minute); err == nil || !strings.Contains(err.Error(), "only an owner") {
		t.Errorf("a non-owner elevated: %v", err)
	}
	if _, err := p.Elevate("telegram:123 (@ann)", 48*time.Hour); err == nil {
		t.Error("a 48h window was accepted")
	}
	p.Elevate("telegram:123 (@ann)", 10*time.Minute)
	if a, _ := p.Check(tools.Caller{Channel: "telegram", User: "telegram:123", Actor: tools.Model}, "sys/exec"); a == Deny {
		t.Error("sys/exec denied inside the window")
	}
	if a, _ := p.Check(tools.Caller{Channel: "telegram", User: "telegram:5", Actor: tools.Model}, "sys/exec"); a != Deny {
		t.Error("another user's call ran in the owner's window")
	}
	clock = clock.Add(10 * time.Minute)
	if a, why := p.Check(tools.Caller{Channel: "telegram", User: "telegram:123", Actor: tools.Model}, "sys/exec"); a != Deny || !strings.Contains(why, "/elevated") {
		t.Errorf("after the window: %s %s", a, why)
	}
}
