package config

import (
	"reflect"
	"testing"
	"time"
)

// issue13 is the issue's example, character for character, with the pins and
// ports it names.
const issue13 = `timezone: Europe/Berlin
location: {lat: 52.52, lon: 13.40}
board:
  pins:
    relay:  {gpio: 22, mode: out}
    pump:   {gpio: 23, mode: out}
    button: {gpio: 27, mode: in, edge: both}
    rain:   {gpio: 5, mode: in}
  ports:
    modem: {device: /dev/ttyUSB0}
  buses:
    sensors: {i2c: "1"}
automations:
  porch-on:  {when: {sun: sunset, offset: -15m}, do: '@gpio/write{pin="relay";value=1}'}
  porch-off: {when: {cron: "0 23 * * *"}, do: '@gpio/write{pin="relay";value=0}'}
  doorbell:  {when: {pin: button, edge: falling, debounce: 50ms}, notify: "Doorbell at {time}"}
  plants:    {when: {cron: "0 7 * * *"}, if: {pin: rain, is: low}, do: '@gpio/pulse{pin="pump";ms=60000}'}
  freezer:   {when: {read: '@i2c/read{bus="sensors";addr=0x48;reg=0;n=2}', every: 1m, above: -10, for: 5m}, notify: "Freezer warm: {value}"}
  modem:     {when: {serial: modem, match: "^RING"}, notify: "Phone ringing"}
  heartbeat: {when: {every: 6h}, ask: "Look at the pins and sensors and tell me only if something is off."}
`

func TestAutomationsIssueExample(t *testing.T) {
	c, err := Parse([]byte(issue13), "a.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Timezone != "Europe/Berlin" || *c.Location != (Location{52.52, 13.40}) {
		t.Errorf("timezone %q location %+v", c.Timezone, c.Location)
	}
	above := -10.0
	want := map[string]Automation{
		"porch-on":  {When: Trigger{Sun: "sunset", Offset: Duration(-15 * time.Minute)}, Do: `@gpio/write{pin="relay";value=1}`},
		"porch-off": {When: Trigger{Cron: "0 23 * * *"}, Do: `@gpio/write{pin="relay";value=0}`},
		"doorbell":  {When: Trigger{Pin: "button", Edge: "falling", Debounce: Duration(50 * time.Millisecond)}, Notify: "Doorbell at {time}"},
		"plants":    {When: Trigger{Cron: "0 7 * * *"}, If: &Condition{Pin: "rain", Is: "low"}, Do: `@gpio/pulse{pin="pump";ms=60000}`},
		"freezer": {When: Trigger{Read: `@i2c/read{bus="sensors";addr=0x48;reg=0;n=2}`, Every: Duration(time.Minute),
			Above: &above, For: Duration(5 * time.Minute)}, Notify: "Freezer warm: {value}"},
		"modem":     {When: Trigger{Serial: "modem", Match: "^RING"}, Notify: "Phone ringing"},
		"heartbeat": {When: Trigger{Every: Duration(6 * time.Hour)}, Ask: "Look at the pins and sensors and tell me only if something is off."},
	}
	for name, a := range want {
		a.CatchUp, a.AsksPerDay = "skip", defaultAsksPerDay
		if got := c.Automations[name]; !reflect.DeepEqual(got, a) {
			t.Errorf("%s = %+v\nwant %+v", name, got, a)
		}
	}
	if len(c.Automations) != len(want) {
		t.Errorf("%d automations, want %d", len(c.Automations), len(want))
	}
	// Redacted writes them back so that they parse to the same thing.
	out, _ := c.Redacted()
	back, err := Parse(out, "back.yaml", nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	back.Source = c.Source
	if !reflect.DeepEqual(back, c) {
		t.Errorf("round trip differs:\n%s", out)
	}
}

func TestAutomationErrors(t *testing.T) {
	const pins = "board:\n  pins:\n    led: {gpio: 17, mode: out}\n    b: {gpio: 27, mode: in}\n"
	for _, tc := range []struct{ src, at, msg string }{
		{"timezone: Mars/Olympus\n", "Mars", `"Mars/Olympus" is not a known IANA time zone`},
		{"location: {lat: 91, lon: 0}\n", "91", "location.lat: must be from -90 to 90"},
		{"automations:\n  a: {when: {cron: \"0 25 * * *\"}, do: '@x/y{}'}\n", `"0 25`, "automations.a.when.cron: \"0 25 * * *\" is not a cron expression"},
		{"automations:\n  a: {when: {cron: \"@every 5m\"}, do: '@x/y{}'}\n", `"@every`, "use every: instead"},
		{"automations:\n  a: {when: {cron: \"0 1 * * *\", every: 1m}, do: '@x/y{}'}\n", "when", "one trigger per automation, found cron and every"},
		{"automations:\n  a: {when: {}, do: '@x/y{}'}\n", "when", "no trigger"},
		{"automations:\n  a: {when: {every: 1m}}\n", "a:", "nothing to do: set do, ask or notify"},
		{"automations:\n  a: {when: {every: 1m}, do: 'gpio write'}\n", "'gpio write'", "must be a command"},
		{"automations:\n  a: {when: {every: 1m}, notify: 'at {tme}'}\n", "'at {tme}'", "unknown placeholder {tme}"},
		{"automations:\n  a: {when: {every: 1m}, notify: x, catch_up: all}\n", "all", "must be skip or once"},
		{"automations:\n  a: {when: {every: 1m, edge: rising}, notify: x}\n", "rising", "does not apply to a every trigger"},
		{"automations:\n  a: {when: {sun: sunset}, notify: x}\n", "sunset", "needs location"},
		{"location: {lat: 1, lon: 1}\nautomations:\n  a: {when: {sun: noon}, notify: x}\n", "noon", "must be sunrise or sunset"},
		{pins + "automations:\n  a: {when: {pin: led}, notify: x}\n", "led}", "is an output"},
		{pins + "automations:\n  a: {when: {pin: b}, notify: x}\n", "b}", "has no edge detection"},
		{pins + "automations:\n  a: {when: {pin: nope}, notify: x}\n", "nope", "is not a configured pin"},
		{"automations:\n  a: {when: {serial: modem, match: x}, notify: x}\n", "modem", "is not a configured port"},
		{"board:\n  ports: {m: {device: /dev/x}}\nautomations:\n  a: {when: {serial: m, match: \"(\"}, notify: x}\n", `"("`, "is not a regular expression"},
		{"automations:\n  a: {when: {read: '@x/y{}'}, notify: x}\n", "when", "needs above or below"},
		{"automations:\n  a: {when: {at: tomorrow}, notify: x}\n", "tomorrow", "want a local time"},
		{"automations:\n  a: {when: {every: 1m}, if: {between: [\"22:00\", \"25:00\"]}, notify: x}\n", `"25:00"`, "is not a time of day"},
		{"automations:\n  a: {when: {every: 1m}, if: {weekdays: [mon, xyz]}, notify: x}\n", "xyz", "must be sun, mon"},
		{"automations:\n  Bad: {when: {every: 1m}, notify: x}\n", "Bad", "is not a valid name"},
		{"automations:\n  a: {when: {every: 1m}, notfy: x}\n", "notfy", `unknown key "notfy" in automations.a`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
