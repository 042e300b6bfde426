package config

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/robfig/cron/v3"
)

// The time zone, the location and the automations: what the board does on its
// own, on time and on events (docs/automations.md).
//
//	timezone: Europe/Berlin
//	location: {lat: 52.52, lon: 13.40}
//	automation_budget: {asks_per_day: 100}
//	automations:
//	  porch-on:  {when: {sun: sunset, offset: -15m}, do: '@gpio/write{pin="relay";value=1}'}
//	  doorbell:  {when: {pin: button, edge: falling, debounce: 50ms}, notify: "Doorbell at {time}"}
//
// The commands (do, read) are command-language lines; config does not parse them
// (it imports nothing of ours): the automations package does when it starts, and
// names the automation in its error.

// Location is where the board is, for sunrise and sunset only.
type Location struct {
	Lat float64 `yaml:"lat"`
	Lon float64 `yaml:"lon"`
}

// AutomationBudget bounds the model calls all automations' ask actions make.
type AutomationBudget struct {
	// AsksPerDay is the global daily limit of ask runs (each is one agent turn).
	AsksPerDay int `yaml:"asks_per_day"`
}

// Automation is one thing the board does by itself: when the trigger fires and
// the condition holds, the actions run (do, then ask, then notify).
type Automation struct {
	When Trigger    `yaml:"when"`
	If   *Condition `yaml:"if"`
	// Do is a command-language line, run with no model.
	Do string `yaml:"do"`
	// Ask is a prompt to the agent, with the tools the policy allows the auto channel.
	Ask string `yaml:"ask"`
	// Notify is a message to the consoles and the Telegram owners; {time}, {value},
	// {name} and {result} are replaced.
	Notify string `yaml:"notify"`
	// CatchUp is what happens to time-triggered runs missed while the board was off
	// or its clock jumped: skip (default) or once.
	CatchUp string `yaml:"catch_up"`
	// AsksPerDay bounds this automation's ask runs per day.
	AsksPerDay int `yaml:"asks_per_day"`
}

// Trigger is exactly one of: cron, every (alone), at, in, sun, pin, serial, read.
type Trigger struct {
	Cron string `yaml:"cron"`
	// Every is an interval; with read it is how often the command is polled.
	Every Duration `yaml:"every"`
	// At is an absolute local time ("2026-12-24 18:00" or RFC 3339).
	At string `yaml:"at"`
	// In is a one-shot this long after the automation is created (or the daemon starts).
	In Duration `yaml:"in"`
	// Sun is sunrise or sunset, shifted by Offset.
	Sun    string   `yaml:"sun"`
	Offset Duration `yaml:"offset"`
	// Pin fires on an Edge of an input pin, ignoring changes shorter than Debounce;
	// with For, the new level must also hold that long.
	Pin      string   `yaml:"pin"`
	Edge     string   `yaml:"edge"`
	Debounce Duration `yaml:"debounce"`
	For      Duration `yaml:"for"`
	// Serial fires on each line of a configured port that Match (a regular
	// expression) finds.
	Serial string `yaml:"serial"`
	Match  string `yaml:"match"`
	// MQTT fires on each message on this topic filter (mqtt.go's broker;
	// wildcards allowed) whose payload Match finds; no Match: every message.
	MQTT string `yaml:"mqtt"`
	// Read polls a command whose result is a number; it fires when the number goes
	// Above or Below a threshold (and stays there For), and again only after it has
	// come back by Hysteresis.
	Read       string   `yaml:"read"`
	Above      *float64 `yaml:"above"`
	Below      *float64 `yaml:"below"`
	Hysteresis float64  `yaml:"hysteresis"`
}

// Condition is checked when the trigger fires; every part set must hold.
type Condition struct {
	Pin string `yaml:"pin"`
	Is  string `yaml:"is"` // low | high
	// Between is a local time window ["22:00", "06:00"]; it may wrap midnight.
	Between []string `yaml:"between"`
	// Weekdays are mon, tue, wed, thu, fri, sat, sun.
	Weekdays []string `yaml:"weekdays"`
}

// Kind names the trigger: cron, every, at, in, sun, pin, serial or read ("" for none).
func (t Trigger) Kind() string {
	switch {
	case t.Cron != "":
		return "cron"
	case t.Sun != "":
		return "sun"
	case t.Pin != "":
		return "pin"
	case t.Serial != "":
		return "serial"
	case t.MQTT != "":
		return "mqtt"
	case t.Read != "":
		return "read"
	case t.At != "":
		return "at"
	case t.In != 0:
		return "in"
	case t.Every != 0:
		return "every"
	}
	return ""
}

var (
	automationKeys = []string{"when", "if", "do", "ask", "notify", "catch_up", "asks_per_day"}
	triggerKeys    = []string{"cron", "every", "at", "in", "sun", "offset", "pin", "edge", "debounce", "for",
		"serial", "match", "mqtt", "read", "above", "below", "hysteresis"}
	conditionKeys = []string{"pin", "is", "between", "weekdays"}
	locationKeys  = []string{"lat", "lon"}
	budgetKeys    = []string{"asks_per_day"}

	// Weekdays are the names the weekdays condition accepts, Sunday first like time.Weekday.
	Weekdays      = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	catchUps      = []string{"skip", "once"}
	sunEvents     = []string{"sunrise", "sunset"}
	pinEdges      = []string{"rising", "falling", "both"}
	templateField = regexp.MustCompile(`\{[^{}]*\}`)
	// TemplateFields are the placeholders a notify template may use.
	TemplateFields = []string{"{time}", "{value}", "{name}", "{result}"}

	// cronParser is robfig/cron's standard five-field parser with names and the
	// @hourly-style descriptors; @every is refused in validation (use every:).
	cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
)

const (
	defaultAsksPerDay       = 24
	defaultGlobalAsksPerDay = 100
	defaultReadEvery        = Duration(time.Minute)
	// AtLayout is the local form of at: ("2026-12-24 18:00").
	AtLayout = "2006-01-02 15:04"
)

func defaultBudget() AutomationBudget { return AutomationBudget{AsksPerDay: defaultGlobalAsksPerDay} }

// ParseCron parses a cron expression the way the config accepts it.
func ParseCron(expr string) (cron.Schedule, error) {
	if strings.HasPrefix(strings.TrimSpace(expr), "@every") {
		return nil, fmt.Errorf("@every is not a cron expression here: use every: instead")
	}
	if strings.HasPrefix(strings.TrimSpace(expr), "TZ=") || strings.HasPrefix(strings.TrimSpace(expr), "CRON_TZ=") {
		return nil, fmt.Errorf("a time zone prefix is not allowed: the top-level timezone applies")
	}
	return cronParser.Parse(expr)
}

// ParseAt reads an at: value in loc: "2006-01-02 15:04" or RFC 3339.
func ParseAt(s string, loc *time.Location) (time.Time, error) {
	if t, err := time.ParseInLocation(AtLayout, s, loc); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("want a local time like %q or RFC 3339", AtLayout)
}

// ParseClock reads "HH:MM" as minutes after midnight.
func ParseClock(s string) (int, error) {
	t, err := time.Parse("15:04", s)
	if err != nil || len(s) != 5 {
		return 0, fmt.Errorf("%q is not a time of day like 06:30", s)
	}
	return t.Hour()*60 + t.Minute(), nil
}

// CheckTemplate reports a placeholder that is not one of TemplateFields.
func CheckTemplate(s string) error {
	for _, m := range templateField.FindAllString(s, -1) {
		known := false
		for _, f := range TemplateFields {
			known = known || m == f
		}
		if !known {
			return fmt.Errorf("unknown placeholder %s: want %s", m, strings.Join(TemplateFields, ", "))
		}
	}
	return nil
}

// LoadTimezone resolves a timezone: value; "" is the system's zone, else UTC.
// The IANA database is embedded in the binary (zoneinfo.go), since the SD image
// has no /usr/share/zoneinfo.
func LoadTimezone(name string) (*time.Location, error) {
	if name == "" {
		// TZ=Europe/Berlin on a system without zone files: Go fell back to UTC.
		if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" && tz != "UTC" && !strings.HasPrefix(tz, "/") && time.Local.String() == "UTC" {
			if loc, err := loadZone(tz, time.LoadLocation); err == nil {
				return loc, nil
			}
		}
		if time.Local.String() == "" {
			return time.UTC, nil
		}
		return time.Local, nil
	}
	if name == "Local" {
		return nil, fmt.Errorf("write an IANA zone name such as Europe/Berlin, not Local")
	}
	return loadZone(name, time.LoadLocation)
}

func (d *decoder) location(n ast.Node, l **Location) {
	loc := &Location{}
	present := !isNull(d.resolveQuiet(n))
	d.fields(n, "location", locationKeys, func(k string, v ast.Node) {
		switch k {
		case "lat":
			d.number(v, "location.lat", &loc.Lat)
		case "lon":
			d.number(v, "location.lon", &loc.Lon)
		}
	})
	if present {
		*l = loc
	}
}

func (d *decoder) automationBudget(n ast.Node, b *AutomationBudget) {
	d.fields(n, "automation_budget", budgetKeys, func(k string, v ast.Node) {
		d.intField(v, "automation_budget.asks_per_day", &b.AsksPerDay)
	})
}

func (d *decoder) automations(n ast.Node, dst *map[string]Automation) {
	list := map[string]Automation{}
	if d.entries(n, "automations", func(name string, v ast.Node) {
		list[name] = d.automation(v, "automations."+name)
	}) {
		*dst = nilIfEmpty(list)
	}
}

func (d *decoder) automation(n ast.Node, path string) Automation {
	a := Automation{CatchUp: "skip", AsksPerDay: defaultAsksPerDay}
	d.fields(n, path, automationKeys, func(k string, v ast.Node) {
		kp := path + "." + k
		switch k {
		case "when":
			d.trigger(v, kp, &a.When)
		case "if":
			c := &Condition{}
			present := !isNull(d.resolveQuiet(v))
			d.condition(v, kp, c)
			if present {
				a.If = c
			}
		case "do":
			d.str(v, kp, &a.Do)
		case "ask":
			d.str(v, kp, &a.Ask)
		case "notify":
			d.str(v, kp, &a.Notify)
		case "catch_up":
			d.str(v, kp, &a.CatchUp)
		case "asks_per_day":
			d.intField(v, kp, &a.AsksPerDay)
		}
	})
	if a.When.Read != "" && a.When.Every == 0 && !d.failed[path+".when.every"] {
		a.When.Every = defaultReadEvery
	}
	if a.When.Pin != "" && a.When.Edge == "" {
		a.When.Edge = "both"
	}
	return a
}

func (d *decoder) trigger(n ast.Node, path string, t *Trigger) {
	d.fields(n, path, triggerKeys, func(k string, v ast.Node) {
		kp := path + "." + k
		switch k {
		case "cron":
			d.str(v, kp, &t.Cron)
		case "every":
			d.duration(v, kp, &t.Every)
		case "at":
			d.str(v, kp, &t.At)
		case "in":
			d.duration(v, kp, &t.In)
		case "sun":
			d.str(v, kp, &t.Sun)
		case "offset":
			d.duration(v, kp, &t.Offset)
		case "pin":
			d.str(v, kp, &t.Pin)
		case "edge":
			d.str(v, kp, &t.Edge)
		case "debounce":
			d.duration(v, kp, &t.Debounce)
		case "for":
			d.duration(v, kp, &t.For)
		case "serial":
			d.str(v, kp, &t.Serial)
		case "match":
			d.str(v, kp, &t.Match)
		case "mqtt":
			d.str(v, kp, &t.MQTT)
		case "read":
			d.str(v, kp, &t.Read)
		case "above":
			var f float64
			d.number(v, kp, &f)
			if d.has(kp) && !d.failed[kp] {
				t.Above = &f
			}
		case "below":
			var f float64
			d.number(v, kp, &f)
			if d.has(kp) && !d.failed[kp] {
				t.Below = &f
			}
		case "hysteresis":
			d.number(v, kp, &t.Hysteresis)
		}
	})
}

func (d *decoder) condition(n ast.Node, path string, c *Condition) {
	strs := func(v ast.Node, p string, dst *[]string) {
		var l []string
		if d.items(v, p, func(i int, v ast.Node) {
			var s string
			d.str(v, fmt.Sprintf("%s[%d]", p, i), &s)
			l = append(l, s)
		}) {
			*dst = l
		}
	}
	d.fields(n, path, conditionKeys, func(k string, v ast.Node) {
		kp := path + "." + k
		switch k {
		case "pin":
			d.str(v, kp, &c.Pin)
		case "is":
			d.str(v, kp, &c.Is)
		case "between":
			strs(v, kp, &c.Between)
		case "weekdays":
			strs(v, kp, &c.Weekdays)
		}
	})
}

// validateAutomations checks the timezone, location and every automation.
func (d *decoder) validateAutomations(c *Config) {
	if _, err := LoadTimezone(c.Timezone); err != nil {
		d.errf("timezone", "%s is not a known IANA time zone (such as Europe/Berlin or UTC)", d.quote("timezone", c.Timezone))
	}
	if l := c.Location; l != nil {
		if l.Lat < -90 || l.Lat > 90 {
			d.errf("location.lat", "must be from -90 to 90, found %s", formatNumber(l.Lat))
		}
		if l.Lon < -180 || l.Lon > 180 {
			d.errf("location.lon", "must be from -180 to 180, found %s", formatNumber(l.Lon))
		}
	}
	if n := c.AutomationBudget.AsksPerDay; n < 0 || n > 100000 {
		d.errf("automation_budget.asks_per_day", "must be from 0 to 100000, found %d", n)
	}
	for _, name := range byPosition(d, "automations.", c.Automations) {
		path := "automations." + name
		if !nameRE.MatchString(name) {
			d.add(d.keyAt(path), "automations: %s is not a valid name (lowercase letters, digits, _ and -, starting with a letter, at most 32)", strconv.Quote(name))
			continue
		}
		d.validateAutomation(c, path, c.Automations[name])
	}
}

func (d *decoder) validateAutomation(c *Config, path string, a Automation) {
	d.validateTrigger(c, path+".when", a.When)
	if a.If != nil {
		d.validateCondition(c, path+".if", *a.If)
	}
	if a.Do == "" && a.Ask == "" && a.Notify == "" && !d.failed[path] {
		d.add(d.keyAt(path), "%s: nothing to do: set do, ask or notify", path)
	}
	for _, k := range []struct{ key, v string }{{"do", a.Do}, {"when.read", a.When.Read}} {
		if k.v != "" && !strings.HasPrefix(strings.TrimSpace(k.v), "@") && !strings.HasPrefix(strings.TrimSpace(k.v), "[") {
			d.errf(path+"."+k.key, "must be a command such as @gpio/write{pin=\"led\";value=1}")
		}
	}
	if a.Notify != "" {
		if err := CheckTemplate(a.Notify); err != nil {
			d.errf(path+".notify", "%v", err)
		}
	}
	d.oneOf(path+".catch_up", a.CatchUp, catchUps)
	if a.AsksPerDay < 0 || a.AsksPerDay > 10000 {
		d.errf(path+".asks_per_day", "must be from 0 to 10000, found %d", a.AsksPerDay)
	}
}

func (d *decoder) validateTrigger(c *Config, path string, t Trigger) {
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{{"cron", t.Cron != ""}, {"at", t.At != ""}, {"in", t.In != 0}, {"sun", t.Sun != ""},
		{"pin", t.Pin != ""}, {"serial", t.Serial != ""}, {"mqtt", t.MQTT != ""}, {"read", t.Read != ""}} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	if t.Every != 0 && t.Read == "" {
		kinds = append(kinds, "every")
	}
	switch {
	case len(kinds) == 0:
		if !d.failed[path] && !d.failed[parent(path)] {
			d.add(d.keyAt(path), "%s: no trigger: set one of cron, every, at, in, sun, pin, serial, mqtt or read", path)
		}
		return
	case len(kinds) > 1:
		d.add(d.keyAt(path), "%s: one trigger per automation, found %s", path, strings.Join(kinds, " and "))
		return
	}
	kind := kinds[0]
	// Keys that belong to another kind of trigger are mistakes, not options.
	allowed := map[string][]string{
		"cron": {"cron"}, "every": {"every"}, "at": {"at"}, "in": {"in"}, "sun": {"sun", "offset"},
		"pin": {"pin", "edge", "debounce", "for"}, "serial": {"serial", "match"}, "mqtt": {"mqtt", "match"},
		"read": {"read", "every", "above", "below", "hysteresis", "for"},
	}[kind]
	for _, k := range triggerKeys {
		if d.has(path+"."+k) && !containsStr(allowed, k) {
			d.errf(path+"."+k, "does not apply to a %s trigger", kind)
		}
	}
	switch kind {
	case "cron":
		if _, err := ParseCron(t.Cron); err != nil {
			d.errf(path+".cron", "%s is not a cron expression (minute hour day-of-month month day-of-week, or @hourly, @daily, @weekly, @monthly): %v", d.quote(path+".cron", t.Cron), err)
		}
	case "every":
		if t.Every < Duration(time.Second) {
			d.errf(path+".every", "must be at least 1s, found %s", t.Every)
		}
	case "at":
		if _, err := ParseAt(t.At, time.UTC); err != nil {
			d.errf(path+".at", "%s: %v", d.quote(path+".at", t.At), err)
		}
	case "in":
		if t.In < Duration(time.Second) {
			d.errf(path+".in", "must be at least 1s, found %s", t.In)
		}
	case "sun":
		d.oneOf(path+".sun", t.Sun, sunEvents)
		if c.Location == nil && !d.failed["location"] {
			d.errf(path+".sun", "needs location: {lat: ..., lon: ...} at the top level")
		}
		if t.Offset < Duration(-12*time.Hour) || t.Offset > Duration(12*time.Hour) {
			d.errf(path+".offset", "must be within ±12h, found %s", t.Offset)
		}
	case "pin":
		p, ok := c.Board.Pins[t.Pin]
		switch {
		case !ok:
			d.errf(path+".pin", "%s is not a configured pin", d.quote(path+".pin", t.Pin))
		case p.Mode != "in":
			d.errf(path+".pin", "%s is an output; a pin trigger needs an input", d.quote(path+".pin", t.Pin))
		case p.Edge == "none" || p.Edge == "":
			d.errf(path+".pin", "%s has no edge detection; set edge: both on the pin in board.pins", d.quote(path+".pin", t.Pin))
		}
		if d.oneOf(path+".edge", t.Edge, pinEdges) && ok && p.Edge != "both" && p.Edge != t.Edge && p.Edge != "none" {
			d.errf(path+".edge", "the pin detects %s edges only", p.Edge)
		}
		d.nonNegative(path+".debounce", t.Debounce)
		d.nonNegative(path+".for", t.For)
	case "serial":
		if _, ok := c.Board.Ports[t.Serial]; !ok {
			d.errf(path+".serial", "%s is not a configured port", d.quote(path+".serial", t.Serial))
		}
		if t.Match == "" {
			d.missing(path+".match", " (a regular expression each line is searched with)")
		} else if _, err := regexp.Compile(t.Match); err != nil {
			d.errf(path+".match", "is not a regular expression: %v", err)
		}
	case "mqtt":
		if c.MQTT == nil {
			d.errf(path+".mqtt", "needs an mqtt: section at the top level (the broker)")
		}
		if err := CheckTopicFilter(t.MQTT); err != nil {
			d.errf(path+".mqtt", "%s: %v", d.quote(path+".mqtt", t.MQTT), err)
		}
		if _, err := regexp.Compile(t.Match); err != nil {
			d.errf(path+".match", "is not a regular expression: %v", err)
		}
	case "read":
		if t.Every < Duration(time.Second) {
			d.errf(path+".every", "must be at least 1s, found %s", t.Every)
		}
		if t.Above == nil && t.Below == nil {
			d.add(d.keyAt(path), "%s: a read trigger needs above or below", path)
		}
		if t.Above != nil && t.Below != nil && *t.Below <= *t.Above {
			d.errf(path+".below", "must be greater than above (the trigger fires outside the band)")
		}
		if t.Hysteresis < 0 || math.IsNaN(t.Hysteresis) {
			d.errf(path+".hysteresis", "must not be negative")
		}
		d.nonNegative(path+".for", t.For)
	}
}

func (d *decoder) nonNegative(path string, v Duration) {
	if v < 0 {
		d.errf(path, "must not be negative, found %s", v)
	}
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (d *decoder) validateCondition(c *Config, path string, cond Condition) {
	if cond.Pin != "" || cond.Is != "" {
		if _, ok := c.Board.Pins[cond.Pin]; !ok {
			d.errf(path+".pin", "%s is not a configured pin", d.quote(path+".pin", cond.Pin))
		}
		d.oneOf(path+".is", cond.Is, levels)
	}
	if cond.Between != nil {
		if len(cond.Between) != 2 {
			d.errf(path+".between", "must be two times of day, such as [\"22:00\", \"06:00\"]")
		}
		for i, s := range cond.Between {
			if _, err := ParseClock(s); err != nil {
				d.errf(fmt.Sprintf("%s.between[%d]", path, i), "%v", err)
			}
		}
	}
	for i, w := range cond.Weekdays {
		d.oneOf(fmt.Sprintf("%s.weekdays[%d]", path, i), w, Weekdays)
	}
}

// writeAutomations writes timezone, location, the budget and the automations for Redacted.
func (c *Config) writeAutomations(w *writer) {
	w.kvOmit(0, "timezone", c.Timezone)
	if l := c.Location; l != nil {
		w.kv(0, "location", "{lat: "+formatNumber(l.Lat)+", lon: "+formatNumber(l.Lon)+"}")
	}
	w.key(0, "automation_budget")
	w.kv(1, "asks_per_day", strconv.Itoa(c.AutomationBudget.AsksPerDay))
	if len(c.Automations) == 0 {
		return
	}
	w.key(0, "automations")
	for _, name := range sortedKeys(c.Automations) {
		a := c.Automations[name]
		w.key(1, yamlKey(name))
		w.key(2, "when")
		t := a.When
		w.kvOmit(3, "cron", t.Cron)
		if t.Every != 0 {
			w.kv(3, "every", t.Every.String())
		}
		w.kvOmit(3, "at", t.At)
		if t.In != 0 {
			w.kv(3, "in", t.In.String())
		}
		w.kvOmit(3, "sun", t.Sun)
		if t.Offset != 0 {
			w.kv(3, "offset", t.Offset.String())
		}
		w.kvOmit(3, "pin", t.Pin)
		w.kvOmit(3, "edge", t.Edge)
		if t.Debounce != 0 {
			w.kv(3, "debounce", t.Debounce.String())
		}
		if t.For != 0 {
			w.kv(3, "for", t.For.String())
		}
		w.kvOmit(3, "serial", t.Serial)
		w.kvOmit(3, "match", t.Match)
		w.kvOmit(3, "mqtt", t.MQTT)
		w.kvOmit(3, "read", t.Read)
		if t.Above != nil {
			w.kv(3, "above", formatNumber(*t.Above))
		}
		if t.Below != nil {
			w.kv(3, "below", formatNumber(*t.Below))
		}
		if t.Hysteresis != 0 {
			w.kv(3, "hysteresis", formatNumber(t.Hysteresis))
		}
		if cond := a.If; cond != nil && cond.Pin == "" && cond.Is == "" && cond.Between == nil && cond.Weekdays == nil {
			w.kv(2, "if", "{}")
		} else if cond != nil {
			w.key(2, "if")
			w.kvOmit(3, "pin", cond.Pin)
			w.kvOmit(3, "is", cond.Is)
			for _, l := range []struct {
				key  string
				list []string
			}{{"between", cond.Between}, {"weekdays", cond.Weekdays}} {
				if l.list == nil {
					continue
				}
				w.key(3, l.key)
				for _, s := range l.list {
					w.item(4, w.str(s))
				}
			}
		}
		w.kvOmit(2, "do", a.Do)
		w.kvOmit(2, "ask", a.Ask)
		w.kvOmit(2, "notify", a.Notify)
		w.kv(2, "catch_up", w.str(a.CatchUp))
		w.kv(2, "asks_per_day", strconv.Itoa(a.AsksPerDay))
	}
}
