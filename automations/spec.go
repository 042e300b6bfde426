// Package automations is what the board does by itself: triggers (cron, interval,
// one-shot, sunrise/sunset, pin edges), conditions, and runs of do / ask / notify
// actions. It is a request source like a channel: every command an automation
// runs goes through the one call path (tools.Runner: validate, audit intent, tool,
// audit outcome) with the caller auto:<name>. See docs/automations.md.
package automations

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/clawedge/clawedge/tools"
	"github.com/robfig/cron/v3"
)

// Spec is one automation. cmd/clawedge builds Specs from the config; auto/add builds
// them from a tool call and the scheduler keeps those in the store.
type Spec struct {
	Name string `json:"name"`
	// Exactly one trigger.
	Cron   string        `json:"cron,omitempty"`
	Every  time.Duration `json:"every,omitempty"`
	At     time.Time     `json:"at,omitzero"` // at: and in: (resolved when added)
	Sun    SunEvent      `json:"sun,omitempty"`
	Offset time.Duration `json:"offset,omitempty"`
	// Pin triggers fire on Edge (rising|falling|both) once the level has been
	// stable for Debounce and, if set, held For.
	Pin      string        `json:"pin,omitempty"`
	Edge     string        `json:"edge,omitempty"`
	Debounce time.Duration `json:"debounce,omitempty"`
	For      time.Duration `json:"for,omitempty"`

	// Serial fires on each line of port Serial that Match finds.
	Serial string `json:"serial,omitempty"`
	Match  string `json:"match,omitempty"`
	// MQTT fires on each message on the topic filter MQTT (wildcards allowed)
	// whose payload Match finds; an empty Match takes every message.
	MQTT string `json:"mqtt,omitempty"`
	// Read polls the command Read every Every; it fires when the number goes
	// above Above or below Below and stays there For, and again only after it
	// has come back by Hysteresis.
	Read       string   `json:"read,omitempty"`
	Above      *float64 `json:"above,omitempty"`
	Below      *float64 `json:"below,omitempty"`
	Hysteresis float64  `json:"hysteresis,omitempty"`

	If Condition `json:"if,omitzero"`

	Do     string `json:"do,omitempty"`
	Ask    string `json:"ask,omitempty"`
	Notify string `json:"notify,omitempty"`
	// CatchUp is "skip" (default) or "once".
	CatchUp    string `json:"catch_up,omitempty"`
	AsksPerDay int    `json:"asks_per_day,omitempty"`
	// Added is true for automations created at run time (auto/add).
	Added bool `json:"added,omitempty"`
	// Creator is who created it, whose rights every run acts with: the
	// config's author for configured ones (nil), else the caller of auto/add.
	Creator *tools.Principal `json:"creator,omitempty"`
	// Approved is the id of a person's approval of the auto/add call that
	// created it: its do: line was approved with it and does not ask again.
	Approved string `json:"approved,omitempty"`
}

// Condition must hold when the trigger fires for the actions to run.
type Condition struct {
	Pin string `json:"pin,omitempty"`
	Is  string `json:"is,omitempty"` // low | high
	// Between is a local time-of-day window in minutes after midnight; From > To
	// wraps midnight. Unset when both are zero.
	From     int            `json:"from,omitempty"`
	To       int            `json:"to,omitempty"`
	Window   bool           `json:"window,omitempty"`
	Weekdays []time.Weekday `json:"weekdays,omitempty"`
}

// Kind names the trigger.
func (s *Spec) Kind() string {
	switch {
	case s.Cron != "":
		return "cron"
	case s.Sun != "":
		return "sun"
	case s.Pin != "":
		return "pin"
	case s.Serial != "":
		return "serial"
	case s.MQTT != "":
		return "mqtt"
	case s.Read != "":
		return "read"
	case !s.At.IsZero():
		return "at"
	case s.Every != 0:
		return "every"
	}
	return ""
}

// timed reports whether the trigger is a time (rather than an event) trigger:
// only those depend on a trusted clock and catch up after downtime.
func (s *Spec) timed() bool {
	switch s.Kind() {
	case "cron", "every", "at", "sun":
		return true
	}
	return false
}

// Trigger describes the trigger for people: "cron 0 23 * * *", "every 1s".
func (s *Spec) Trigger() string {
	switch s.Kind() {
	case "cron":
		return "cron " + s.Cron
	case "every":
		return "every " + s.Every.String()
	case "at":
		return "at " + s.At.Format(time.RFC3339)
	case "sun":
		if s.Offset != 0 {
			return fmt.Sprintf("%s %+v", s.Sun, s.Offset)
		}
		return string(s.Sun)
	case "pin":
		return fmt.Sprintf("pin %s %s", s.Pin, s.Edge)
	case "serial":
		return fmt.Sprintf("serial %s /%s/", s.Serial, s.Match)
	case "mqtt":
		return fmt.Sprintf("mqtt %s /%s/", s.MQTT, s.Match)
	case "read":
		t := "read " + s.Read + " every " + s.Every.String()
		if s.Above != nil {
			t += fmt.Sprintf(" above %g", *s.Above)
		}
		if s.Below != nil {
			t += fmt.Sprintf(" below %g", *s.Below)
		}
		return t
	}
	return "none"
}

// Weekday reads sun, mon, ... sat.
func Weekday(name string) time.Weekday {
	for i, n := range []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"} {
		if n == name {
			return time.Weekday(i)
		}
	}
	return time.Sunday
}

// cronParser accepts what the config does: five fields with names, and the
// @hourly-style descriptors (github.com/robfig/cron/v3, see docs/automations.md).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron parses a cron expression; @every and a TZ= prefix are refused (every:
// and the top-level timezone say those).
func parseCron(expr string) (cron.Schedule, error) {
	e := strings.TrimSpace(expr)
	if strings.HasPrefix(e, "@every") || strings.HasPrefix(e, "TZ=") || strings.HasPrefix(e, "CRON_TZ=") {
		return nil, fmt.Errorf("cron %q: use every: for intervals; the time zone is the top-level timezone", expr)
	}
	s, err := cronParser.Parse(e)
	if err != nil {
		return nil, fmt.Errorf("cron %q: %w", expr, err)
	}
	return s, nil
}

var (
	nameRE     = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`) // at most 32: checked apart, as {0,31} costs 11 kB of heap
	templateRE = regexp.MustCompile(`\{[^{}]*\}`)
	fields     = map[string]bool{"{time}": true, "{value}": true, "{name}": true, "{result}": true}
)

// Check reports what is wrong with s, naming the automation.
func (s *Spec) Check() error {
	if len(s.Name) > 32 || !nameRE.MatchString(s.Name) {
		return fmt.Errorf("automation %q: a name is lowercase letters, digits, _ and -, starting with a letter, at most 32", s.Name)
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("automation %s: %s", s.Name, fmt.Sprintf(format, args...))
	}
	n := 0
	for _, set := range []bool{s.Cron != "", s.Every != 0 && s.Read == "", !s.At.IsZero(), s.Sun != "", s.Pin != "", s.Serial != "", s.MQTT != "", s.Read != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fail("exactly one trigger is needed (cron, every, at, in, sun, pin, serial, mqtt or read), found %d", n)
	}
	switch s.Kind() {
	case "cron":
		if _, err := parseCron(s.Cron); err != nil {
			return fail("%v", err)
		}
	case "every":
		if s.Every < time.Second {
			return fail("every must be at least 1s")
		}
	case "sun":
		if s.Sun != Sunrise && s.Sun != Sunset {
			return fail("sun must be sunrise or sunset")
		}
	case "pin":
		switch s.Edge {
		case "rising", "falling", "both":
		default:
			return fail("edge must be rising, falling or both")
		}
	case "serial":
		if _, err := regexp.Compile(s.Match); err != nil || s.Match == "" {
			return fail("match must be a regular expression")
		}
	case "mqtt":
		if _, err := regexp.Compile(s.Match); err != nil {
			return fail("match must be a regular expression")
		}
	case "read":
		if s.Every < time.Second {
			return fail("every must be at least 1s")
		}
		if s.Above == nil && s.Below == nil {
			return fail("a read trigger needs above or below")
		}
	}
	if s.Do == "" && s.Ask == "" && s.Notify == "" {
		return fail("nothing to do: set do, ask or notify")
	}
	if err := checkTemplate(s.Notify); err != nil {
		return fail("notify: %v", err)
	}
	switch s.CatchUp {
	case "", "skip", "once":
	default:
		return fail("catch_up must be skip or once")
	}
	return nil
}

func checkTemplate(t string) error {
	for _, m := range templateRE.FindAllString(t, -1) {
		if !fields[m] {
			return fmt.Errorf("unknown placeholder %s: want {time}, {value}, {name} or {result}", m)
		}
	}
	return nil
}

// render fills a notify template.
func render(t string, vals map[string]string) string {
	return templateRE.ReplaceAllStringFunc(t, func(m string) string {
		if v, ok := vals[m]; ok {
			return v
		}
		return m
	})
}
