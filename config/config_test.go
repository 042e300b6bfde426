package config

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Secret values used throughout the tests: long and distinctive, so that
// a test can assert that they appear nowhere they must not.
const (
	tgToken      = "123456:TG-secret-token-value"
	anthropicKey = "sk-ant-secret-key-value"
)

var testEnv = map[string]string{
	"TELEGRAM_TOKEN":    tgToken,
	"ANTHROPIC_API_KEY": anthropicKey,
}

func envFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := Parse([]byte(src), "test.yaml", envFrom(testEnv))
	if err != nil {
		t.Fatalf("Parse:\n%v\nsource:\n%s", err, src)
	}
	return c
}

// parseError parses src, which must fail, and returns the problems.
func parseError(t *testing.T, src string, env map[string]string) *Error {
	t.Helper()
	c, err := Parse([]byte(src), "test.yaml", envFrom(env))
	if err == nil {
		t.Fatalf("Parse succeeded (%+v), want an error; source:\n%s", c, src)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, want *Error: %v", err, err)
	}
	if c != nil {
		t.Errorf("Parse returned a config with an error")
	}
	for _, p := range e.List {
		if p.File != "test.yaml" || p.Line < 1 || p.Column < 1 {
			t.Errorf("problem without a full position: %#v", p)
		}
	}
	return e
}

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestDefault(t *testing.T) {
	c := Default()
	if c.DataDir != "./data" || c.Board.Driver != "sim" || c.Source != "" {
		t.Errorf("data_dir %q, driver %q, source %q", c.DataDir, c.Board.Driver, c.Source)
	}
	wantPins := map[string]Pin{
		"led":    {GPIO: 17, Mode: "out", Initial: "low", Safe: "low"},
		"button": {GPIO: 27, Mode: "in", Pull: "up", Edge: "both"},
		"relay":  {GPIO: 22, Mode: "out", ActiveLow: true, Initial: "low", Safe: "low", MaxOn: Duration(10 * time.Minute)},
	}
	if !reflect.DeepEqual(c.Board.Pins, wantPins) {
		t.Errorf("pins = %+v, want %+v", c.Board.Pins, wantPins)
	}
	if len(c.Board.Ports) != 0 || len(c.Board.Buses) != 0 || c.Console.Serial != nil {
		t.Errorf("default has ports, buses or a serial console: %+v", c)
	}
	if !c.ConsoleStdin() || c.Console.Stdin == nil {
		t.Errorf("stdin console is off by default")
	}
	if c.Telegram.APIURL != "https://api.telegram.org" || c.Telegram.Token != "" || c.Telegram.Pairing {
		t.Errorf("telegram = %+v", c.Telegram)
	}
	if c.Models.Router.Strategy != "local-first" || c.Models.Local != nil || c.Models.Remote != nil {
		t.Errorf("models = %+v", c.Models)
	}

	// Each call returns its own maps: a caller editing its config must
	// not change the next caller's defaults.
	c.Board.Pins["led"] = Pin{}
	*c.Console.Stdin = false
	if d := Default(); d.Board.Pins["led"].GPIO != 17 || !d.ConsoleStdin() {
		t.Errorf("Default shares state between calls")
	}
}

func TestConsoleStdin(t *testing.T) {
	f, tr := false, true
	for _, tc := range []struct {
		stdin *bool
		want  bool
	}{{nil, true}, {&tr, true}, {&f, false}} {
		c := Config{Console: Console{Stdin: tc.stdin}}
		if got := c.ConsoleStdin(); got != tc.want {
			t.Errorf("ConsoleStdin with %v = %v", tc.stdin, got)
		}
	}
	if c := mustParse(t, "console: {stdin: false}"); c.ConsoleStdin() {
		t.Errorf("stdin: false did not turn the console off")
	}
}

// An empty file, or one with only comments or null sections, is the
// defaults.
func TestEmptyIsDefault(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "---\n", "\ufeff# a byte order mark\n", "board:\nconsole:\ntelegram: ~\nmodels: null\n", "board: {pins: null}\n"} {
		c := mustParse(t, src)
		want := Default()
		want.Source = "test.yaml"
		if !reflect.DeepEqual(c, want) {
			t.Errorf("Parse(%q) = %+v, want the defaults", src, c)
		}
	}
}

func TestFullExample(t *testing.T) {
	c, err := Parse(readTestdata(t, "full.yaml"), "full.yaml", envFrom(testEnv))
	if err != nil {
		t.Fatal(err)
	}
	stdin := true
	want := &Config{
		DataDir: "./data",
		Board: Board{
			Driver: "sim",
			Pins: map[string]Pin{
				"led":    {GPIO: 17, Mode: "out", Initial: "low", Safe: "low"},
				"button": {GPIO: 27, Mode: "in", Pull: "up", Edge: "both"},
				"relay":  {GPIO: 22, Mode: "out", ActiveLow: true, Initial: "low", Safe: "low", MaxOn: Duration(10 * time.Minute)},
			},
			Ports: map[string]Port{"arduino": {Device: "/dev/ttyUSB0", Baud: 115200}},
		},
		Console: Console{Stdin: &stdin, Serial: &SerialConsole{Device: "/dev/ttyS0", Baud: 115200}},
		Telegram: Telegram{
			Token:      tgToken,
			APIURL:     "https://api.telegram.org",
			AllowUsers: []int64{123456789},
			Pairing:    true,
		},
		Models: Models{
			Local: &LocalModel{Path: "./data/models/qwen2.5-0.5b-instruct-q4_k_m.gguf", Threads: 4, Context: 4096, ThinkBudget: 256,
				IdleUnload: Duration(10 * time.Minute), Quality: 5, Speed: 5},
			Remote: []RemoteModel{
				{Name: "lan", Kind: "openai", BaseURL: "http://192.168.1.10:11434/v1", Model: "qwen2.5:7b",
					Quality: 5, Speed: 5, Tools: true, Temperature: 0.7},
				{Name: "claude", Kind: "anthropic", BaseURL: "https://api.anthropic.com", APIKey: anthropicKey,
					Model: "claude-sonnet-4-5", Quality: 5, Speed: 5, Tools: true, Temperature: 0.7},
			},
			Router: Router{Strategy: "local-first"},
		},
		Policy:  defaultPolicy(),
		Agent:   defaultAgent(),
		Exec:    defaultExec(),
		Secrets: Secrets{Key: "device"},
		Memory:  defaultMemory(),
		Goals:   defaultGoals(),
		Source:  "full.yaml",

		AutomationBudget: defaultBudget(),
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if c.Telegram.Token.Reveal() != tgToken || c.Models.Remote[1].APIKey.Reveal() != anthropicKey {
		t.Errorf("secrets not expanded")
	}
}

// The example config is what ships as the default config file: it must
// parse with an empty environment, give exactly the built-in defaults, and
// mention every key of the schema.
func TestExampleConfig(t *testing.T) {
	data := readTestdata(t, "example.yaml")
	c, err := Parse(data, "example.yaml", envFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Source = "example.yaml"
	if !reflect.DeepEqual(c, want) {
		t.Errorf("example.yaml = %+v, want the defaults %+v", c, want)
	}
	for _, keys := range [][]string{topKeys, boardKeys, pinKeys, portKeys, busKeys, sensorKeys, spiKeys, consoleKeys,
		serialKeys, telegramKeys, modelsKeys, localKeys, remoteKeys, routerKeys, policyKeys, agentKeys,
		automationKeys, triggerKeys, conditionKeys, locationKeys, budgetKeys,
		mqttKeys, mqttDiscoveryKeys, mqttSensorKeys, metricsKeys, webKeys, execKeys, execAllowKeys, execPathKeys, execLimitKeys, secretsKeys,
		mcpKeys, mcpServeKeys, mcpServerKeys, updateKeys, memoryKeys, skillsKeys, goalsKeys, goalBudgetKeys} {
		for _, k := range keys {
			if !strings.Contains(string(data), k+":") {
				t.Errorf("example.yaml does not document %q", k)
			}
		}
	}
	for _, s := range slices.Concat(drivers, modes, pulls, edges, kinds, strategies, templates, execModes, secretKeyKind) {
		if !strings.Contains(string(data), s) {
			t.Errorf("example.yaml does not mention %q", s)
		}
	}
}

func TestPartialFileKeepsDefaults(t *testing.T) {
	c := mustParse(t, "board:\n  driver: periph\ntelegram:\n  pairing: true\n")
	if c.Board.Driver != "periph" || !c.Telegram.Pairing {
		t.Errorf("file values not applied: %+v", c)
	}
	d := Default()
	if !reflect.DeepEqual(c.Board.Pins, d.Board.Pins) || c.DataDir != d.DataDir ||
		c.Telegram.APIURL != d.Telegram.APIURL || !reflect.DeepEqual(c.Models.Router, d.Models.Router) || !c.ConsoleStdin() {
		t.Errorf("defaults lost: %+v", c)
	}
}

// A file that lists pins means exactly those pins.
func TestPinsReplaceDefaults(t *testing.T) {
	c := mustParse(t, `
board:
  pins:
    door: {gpio: 5, mode: out}
    sensor: {gpio: 6, mode: in}
`)
	want := map[string]Pin{
		"door":   {GPIO: 5, Mode: "out", Initial: "low", Safe: "low"},
		"sensor": {GPIO: 6, Mode: "in", Pull: "none", Edge: "none"},
	}
	if !reflect.DeepEqual(c.Board.Pins, want) {
		t.Errorf("pins = %+v, want %+v", c.Board.Pins, want)
	}

	c = mustParse(t, "board: {pins: {}}")
	if c.Board.Pins == nil || len(c.Board.Pins) != 0 {
		t.Errorf("pins: {} = %#v, want no pins", c.Board.Pins)
	}
}

func TestSectionDefaults(t *testing.T) {
	c := mustParse(t, `
board:
  ports:
    gps: {device: /dev/ttyAMA0}
  buses:
    main: {i2c: "1"}
    extra: {i2c: /dev/i2c-3}
console:
  serial: {device: /dev/ttyS0}
models:
  local: {path: m.gguf}
`)
	if got := c.Board.Ports["gps"]; got != (Port{Device: "/dev/ttyAMA0", Baud: 115200}) {
		t.Errorf("port = %+v", got)
	}
	if got := c.Board.Buses; !reflect.DeepEqual(got, map[string]Bus{"main": {I2C: "1"}, "extra": {I2C: "/dev/i2c-3"}}) {
		t.Errorf("buses = %+v", got)
	}
	if got := *c.Console.Serial; got != (SerialConsole{Device: "/dev/ttyS0", Baud: 115200}) {
		t.Errorf("serial = %+v", got)
	}
	if got := *c.Models.Local; got != (LocalModel{Path: "m.gguf", Threads: 4, Context: 4096, ThinkBudget: 256, IdleUnload: Duration(10 * time.Minute), Quality: 5, Speed: 5}) {
		t.Errorf("local = %+v", got)
	}
}

func TestLocalModelKeys(t *testing.T) {
	c := mustParse(t, "models:\n  local: {path: m.gguf, template: qwen3, idle_unload: 1h30m, quality: 3, speed: 6.5}\n")
	want := LocalModel{Path: "m.gguf", Threads: 4, Context: 4096, Template: "qwen3", ThinkBudget: 256, IdleUnload: Duration(90 * time.Minute), Quality: 3, Speed: 6.5}
	if *c.Models.Local != want {
		t.Errorf("local = %+v, want %+v", *c.Models.Local, want)
	}
	c = mustParse(t, "models:\n  local: {path: m.gguf, idle_unload: 0s}\n")
	if c.Models.Local.IdleUnload != 0 || c.Models.Local.Template != "" {
		t.Errorf("local = %+v, want idle_unload 0 and no template", *c.Models.Local)
	}
	for _, tmpl := range templates {
		mustParse(t, "models:\n  local: {path: m.gguf, template: \""+tmpl+"\"}\n")
	}
}

// Values are read as YAML types, with the usual conveniences.
func TestScalarForms(t *testing.T) {
	c := mustParse(t, `
data_dir: |-
  /var/lib/clawedge
board:
  pins:
    a: {gpio: 0x11, mode: out, max_on: 1h30m}
    b: {gpio: 4, mode: out, max_on: "500ms"}
models:
  remote:
    - name: 2024
      kind: openai
      model: 7
      base_url: https://example.com/v1
`)
	if c.DataDir != "/var/lib/clawedge" {
		t.Errorf("data_dir = %q", c.DataDir)
	}
	if p := c.Board.Pins["a"]; p.GPIO != 17 || p.MaxOn != Duration(90*time.Minute) {
		t.Errorf("pin a = %+v", p)
	}
	if p := c.Board.Pins["b"]; p.MaxOn != Duration(500*time.Millisecond) {
		t.Errorf("pin b = %+v", p)
	}
	if r := c.Models.Remote[0]; r.Name != "2024" || r.Model != "7" {
		t.Errorf("remote = %+v", r)
	}
}

func TestAnchorsAndAliases(t *testing.T) {
	c := mustParse(t, `
board:
  pins:
    a: &out {gpio: 5, mode: out}
    b: {gpio: &six 6, mode: in}
models:
  remote:
    - {name: x, kind: &k openai, model: m, base_url: &u http://h/v1}
    - {name: y, kind: *k, model: m, base_url: *u}
`)
	if c.Models.Remote[1].Kind != "openai" || c.Board.Pins["b"].GPIO != 6 {
		t.Errorf("aliases not resolved: %+v", c)
	}

	// A problem inside what an alias refers to is reported where the
	// alias uses it: the anchored entry is fine where it is defined.
	src := "models:\n  remote:\n    - &m {name: a, kind: openai, model: m, base_url: http://h/v1}\n    - *m\n"
	problemAt(t, src, "*m", `models.remote[1].name: duplicate name "a" (also models.remote[0])`)
}

func TestDurationString(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Minute:       "10m",
		90 * time.Minute:       "1h30m",
		2 * time.Hour:          "2h",
		500 * time.Millisecond: "500ms",
		90 * time.Second:       "1m30s",
		0:                      "0s",
	} {
		if got := Duration(d).String(); got != want {
			t.Errorf("Duration(%v).String() = %q, want %q", d, got, want)
		}
	}
}

// Redacted output parses back to the same configuration once the secrets
// are supplied again: `config check` output can be used as a config.
func TestRedactedRoundTrip(t *testing.T) {
	for _, src := range []string{
		string(readTestdata(t, "full.yaml")),
		string(readTestdata(t, "example.yaml")),
		"",
		"board: {pins: {}}\nconsole: {stdin: false}\n",
		"models:\n  local: {path: m.gguf, idle_unload: 0s}\n",
		`
data_dir: "/tmp/a $$dollar: #not a comment"
env: [HOME, TZ]
board:
  driver: periph
  pins:
    x: {gpio: 100, mode: in, pull: down, edge: rising, active_low: true}
    y: {gpio: 101, mode: out, initial: high, safe: high, max_on: 1h30m15s}
  ports:
    p-1: {device: "/dev/tty USB", baud: 9600}
  buses:
    i: {i2c: "1"}
telegram:
  token: ${TELEGRAM_TOKEN}
  api_url: "http://[::1]:8080/bot"
  allow_users: [1, 9007199254740993]
models:
  local: {path: "yes", threads: 1, context: 128, template: qwen2.5, idle_unload: 90s}
  remote:
    - {name: "true", kind: openai, model: "123", base_url: "https://h/v1?a=b&c=d"}
    - {name: "\t tab\u00e9\u2028", kind: anthropic, model: "null", api_key: ${ANTHROPIC_API_KEY}}
  router: {strategy: cascade}
`,
	} {
		c := mustParse(t, src)
		out, err := c.Redacted()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{tgToken, anthropicKey} {
			if strings.Contains(string(out), s) {
				t.Errorf("Redacted output contains a secret:\n%s", out)
			}
		}
		// Supply the secrets again, as a user would.
		again := strings.ReplaceAll(string(out), `token: "[redacted]"`, `token: ${TELEGRAM_TOKEN}`)
		again = strings.ReplaceAll(again, `api_key: "[redacted]"`, `api_key: ${ANTHROPIC_API_KEY}`)
		c2, err := Parse([]byte(again), "test.yaml", envFrom(testEnv))
		if err != nil {
			t.Fatalf("Redacted output does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Errorf("round trip changed the config\nbefore %+v\nafter  %+v\nyaml:\n%s", c, c2, out)
		}
	}
}
