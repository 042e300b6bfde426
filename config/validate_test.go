package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// posOf returns the 1-based line and column (in characters) of the first
// occurrence of anchor in src: tests name the text a problem must point
// at rather than counting columns by hand.
func posOf(t *testing.T, src, anchor string) (line, col int) {
	t.Helper()
	// A "^" in the anchor marks the exact character when the text
	// around it is needed to make the anchor unique.
	caret := max(strings.Index(anchor, "^"), 0)
	i := strings.Index(src, strings.Replace(anchor, "^", "", 1))
	if i < 0 {
		t.Fatalf("anchor %q not in source", anchor)
	}
	i += caret
	line = strings.Count(src[:i], "\n") + 1
	col = utf8.RuneCountInString(src[strings.LastIndex(src[:i], "\n")+1:i]) + 1
	return line, col
}

// problemAt asserts that parsing src reports a problem exactly at the
// first occurrence of anchor, whose message contains msg.
func problemAt(t *testing.T, src, anchor, msg string) {
	t.Helper()
	line, col := posOf(t, src, anchor)
	e := parseError(t, src, testEnv)
	for _, p := range e.List {
		if p.Line == line && p.Column == col && strings.Contains(p.Msg, msg) {
			return
		}
	}
	t.Errorf("no problem at %d:%d containing %q; got:\n%v\nsource:\n%s", line, col, msg, e, src)
}

func TestUnknownKeys(t *testing.T) {
	// The example of the package's contract, character for character.
	src := `data_dir: ./data
board:
  driver: sim
  pins:
    led:
      gpio: 17
      gpoi: 17
      mode: out
`
	_, err := Parse([]byte(src), "clawedge.yaml", nil)
	want := `clawedge.yaml:7:7: unknown key "gpoi" in board.pins.led (valid: gpio, mode, pull, edge, active_low, initial, safe, max_on)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}

	for _, tc := range []struct{ src, at, msg string }{
		{"datadir: x\n", "datadir", `unknown key "datadir" at the top level (valid: data_dir, env, board, console, telegram, models, policy, agent, timezone, location, automation_budget, automations, mqtt, metrics, web, exec, secrets, mcp, update, network, store, memory, skills, goals, boards)`},
		{"board:\n  drivr: sim\n", "drivr", `unknown key "drivr" in board (valid: driver, pins, ports, buses, sensors, spi)`},
		{"board:\n  ports:\n    a: {device: /dev/x, bud: 9600}\n", "bud", `unknown key "bud" in board.ports.a (valid: device, baud)`},
		{"board:\n  buses:\n    a: {bus: 1}\n", "bus:", `unknown key "bus" in board.buses.a (valid: i2c, onewire)`},
		{"console:\n  serial: {dev: x}\n", "dev", `unknown key "dev" in console.serial (valid: device, baud)`},
		{"console: {stdn: true}\n", "stdn", `unknown key "stdn" in console (valid: stdin, serial)`},
		{"telegram:\n  tokn: x\n", "tokn", `unknown key "tokn" in telegram (valid: token, api_url, allow_users, pairing, allow_chats, notify)`},
		{"models:\n  locl: {}\n", "locl", `unknown key "locl" in models (valid: local, remote, router)`},
		{"models:\n  local: {path: x, thread: 2}\n", "thread", `unknown key "thread" in models.local (valid: path, threads, context, template, think_budget, idle_unload, quality, speed)`},
		{"models:\n  remote:\n    - name: a\n      key: x\n", "key", `unknown key "key" in models.remote[0] (valid: name, kind, base_url, model, api_key, context, cost_in, cost_out, quality, speed, tools, constraint, timeout, temperature, seed)`},
		{"models:\n  router: {strategy: cost, x: 1}\n", "x:", `unknown key "x" in models.router (valid: strategy, order, local_queue_budget)`},
		{"${UNSET}: x\n", "${UNSET}", `unknown key "${UNSET}" at the top level`},
		{"<<: {data_dir: x}\n", "<<", "merge keys (<<) are not supported"},
		{"board:\n  driver: sim\n  driver: periph\n", "driver: periph", `"driver" already defined`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

func TestTypeErrors(t *testing.T) {
	for _, tc := range []struct{ src, at, msg string }{
		{"board:\n  pins:\n    led: {gpio: seventeen, mode: out}\n", "seventeen", `board.pins.led.gpio: expected an integer, found "seventeen"`},
		{"board:\n  pins:\n    led: {gpio: \"17\", mode: out}\n", `"17"`, `board.pins.led.gpio: expected an integer, found "17"`},
		{"board:\n  pins:\n    led: {gpio: 1.5, mode: out}\n", "1.5", `board.pins.led.gpio: expected an integer, found "1.5"`},
		{"board:\n  pins:\n    led: {gpio: 017, mode: out}\n", "017", `board.pins.led.gpio: "017" is ambiguous (octal or decimal?); write it without the leading zero, or as 0o17 for octal`},
		{"board:\n  pins:\n    led: {gpio: 99999999999999999999, mode: out}\n", "999", `board.pins.led.gpio: "99999999999999999999" is out of range`},
		{"board:\n  pins:\n    led: {gpio: 5, mode: out, active_low: yes}\n", "yes", `board.pins.led.active_low: expected true or false, found "yes"`},
		{"board:\n  pins:\n    led: {gpio: 5, mode: out, max_on: 10}\n", "10}", `board.pins.led.max_on: expected a duration such as 10m, 1h30m or 500ms, found "10"`},
		{"board:\n  pins:\n    led: {gpio: 5, mode: out, max_on: soon}\n", "soon", `board.pins.led.max_on: expected a duration such as 10m, 1h30m or 500ms, found "soon"`},
		{"board:\n  pins:\n    led: [17, out]\n", "[17", "board.pins.led: expected a mapping with keys gpio, mode"},
		{"board:\n  pins: [led]\n", "[led", "board.pins: expected a mapping of names, found a list"},
		{"board: sim\n", "sim", `board: expected a mapping with keys driver, pins, ports, buses, sensors, spi, found "sim"`},
		{"- a\n- b\n", "-", "config: expected a mapping with keys data_dir, env"},
		{"data_dir: [a, b]\n", "[a", "data_dir: expected a string, found a list"},
		{"env: HOME\n", "HOME", `env: expected a list, found "HOME"`},
		{"env: [HOME, [x]]\n", "[x", "env[1]: expected a string, found a list"},
		{"env:\n  - HOME\n  -\n", "-\n", "env[1]: empty list item"},
		{"telegram:\n  allow_users: [1, x]\n", "x]", `telegram.allow_users[1]: expected an integer, found "x"`},
		{"telegram: {pairing: 1}\n", "1}", `telegram.pairing: expected true or false, found "1"`},
		{"console: {stdin: on}\n", "on}", `console.stdin: expected true or false, found "on"`},
		{"models:\n  local: {path: m, threads: four}\n", "four", `models.local.threads: expected an integer, found "four"`},
		{"models:\n  local: {path: m, idle_unload: 10}\n", "10}", `models.local.idle_unload: expected a duration such as 10m, 1h30m or 500ms, found "10"`},
		{"models:\n  local: {path: m, idle_unload: ten minutes}\n", "ten", `models.local.idle_unload: expected a duration such as 10m, 1h30m or 500ms`},
		{"models:\n  local: {path: m, template: [qwen3]}\n", "[qwen3]", `models.local.template: expected a string`},
		{"models:\n  remote: {name: a}\n", "{name", "models.remote: expected a list, found a mapping"},
		{"models:\n  remote:\n    - lan\n", "lan", `models.remote[0]: expected a mapping with keys name, kind, base_url, model, api_key, context, cost_in, cost_out, quality, speed, tools, constraint, timeout, temperature, seed, found "lan"`},
		{"data_dir: !!str 5\n", "!!str", "data_dir: YAML tags (!!str) are not supported"},
		{"data_dir: *nope\n", "*nope", "data_dir: alias *nope refers to no anchor defined before it"},
		{"a: 1\n---\nb: 2\n", "b: 2", "only one YAML document is allowed"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		src       string
		line, col int
	}{
		{"board:\n  pins: {led: {gpio: 17}\n", 2, 9},
		{"a:\n  b: 1\n c: 2\n", 3, 2},
		{"env: [a, b\n", 1, 6},
		{"data_dir: \"unterminated\n", 1, 11},
	} {
		e := parseError(t, tc.src, nil)
		if len(e.List) != 1 || e.List[0].Line != tc.line || e.List[0].Column != tc.col {
			t.Errorf("Parse(%q) = %v, want one problem at %d:%d", tc.src, e, tc.line, tc.col)
		}
		if strings.Contains(e.Error(), "\n") || strings.Contains(e.Error(), ">") {
			t.Errorf("syntax error carries a source excerpt: %q", e.Error())
		}
	}
}

func TestValidationRules(t *testing.T) {
	for _, tc := range []struct {
		name, src, at, msg string
	}{
		{"driver", "board:\n  driver: gpio\n", "gpio\n",
			`board.driver: must be sim or periph, found "gpio"`},
		{"gpio range sim", "board:\n  pins:\n    led: {gpio: 28, mode: out}\n", "28",
			"board.pins.led.gpio: GPIO 28 is out of range for the sim driver (0..27: the BCM GPIO numbers of the 40-pin header)"},
		{"gpio negative", "board:\n  pins:\n    led: {gpio: -1, mode: out}\n", "-1",
			"board.pins.led.gpio: GPIO -1 is out of range for the sim driver"},
		{"gpio range periph", "board:\n  driver: periph\n  pins:\n    led: {gpio: 1024, mode: out}\n", "1024",
			"board.pins.led.gpio: GPIO 1024 is out of range for the periph driver (0..1023"},
		{"duplicate gpio", "board:\n  pins:\n    led: {gpio: 17, mode: out}\n    lamp: {gpio: 17, mode: out}\n", "lamp: {gpio: ^17",
			`board.pins.lamp.gpio: GPIO 17 is already used by pin "led"`},
		{"gpio required", "board:\n  pins:\n    led: {mode: out}\n", "led",
			"board.pins.led: gpio is required"},
		{"mode required", "board:\n  pins:\n    led:\n      gpio: 17\n", "led",
			"board.pins.led: mode is required (in or out)"},
		{"mode value", "board:\n  pins:\n    led: {gpio: 17, mode: output}\n", "output",
			`board.pins.led.mode: must be in or out, found "output"`},
		{"pull on output", "board:\n  pins:\n    led: {gpio: 17, mode: out, pull: up}\n", "up}",
			`board.pins.led.pull: pull applies to input pins, and "led" is an output pin (mode: out): it cannot be both in and out`},
		{"edge on output", "board:\n  pins:\n    led: {gpio: 17, mode: out, edge: none}\n", "none}",
			`board.pins.led.edge: edge applies to input pins, and "led" is an output pin`},
		{"initial on input", "board:\n  pins:\n    b: {gpio: 4, mode: in, initial: high}\n", "high}",
			`board.pins.b.initial: initial applies to output pins, and "b" is an input pin`},
		{"safe on input", "board:\n  pins:\n    b: {gpio: 4, mode: in, safe: low}\n", "low}",
			`board.pins.b.safe: safe applies to output pins, and "b" is an input pin`},
		{"max_on on input", "board:\n  pins:\n    b: {gpio: 4, mode: in, max_on: 5m}\n", "5m}",
			`board.pins.b.max_on: max_on applies to output pins, and "b" is an input pin`},
		{"max_on zero", "board:\n  pins:\n    r: {gpio: 4, mode: out, max_on: 0s}\n", "0s}",
			"board.pins.r.max_on: must be greater than zero"},
		{"max_on negative", "board:\n  pins:\n    r: {gpio: 4, mode: out, max_on: -5m}\n", "-5m}",
			"board.pins.r.max_on: must be greater than zero"},
		{"pull value", "board:\n  pins:\n    b: {gpio: 4, mode: in, pull: high}\n", "high}",
			`board.pins.b.pull: must be none, up or down, found "high"`},
		{"edge value", "board:\n  pins:\n    b: {gpio: 4, mode: in, edge: falling-ish}\n", "falling-ish",
			`board.pins.b.edge: must be none, rising, falling or both, found "falling-ish"`},
		{"initial value", "board:\n  pins:\n    r: {gpio: 4, mode: out, initial: on}\n", "on}",
			`board.pins.r.initial: must be low or high, found "on"`},
		{"safe value", "board:\n  pins:\n    r: {gpio: 4, mode: out, safe: 1}\n", "1}",
			`board.pins.r.safe: must be low or high, found "1"`},
		{"pin name uppercase", "board:\n  pins:\n    Led: {gpio: 4, mode: out}\n", "Led",
			`board.pins: invalid pin name "Led"`},
		{"pin name digit", "board:\n  pins:\n    1led: {gpio: 4, mode: out}\n", "1led",
			`board.pins: invalid pin name "1led"`},
		{"pin name long", "board:\n  pins:\n    " + strings.Repeat("a", 33) + ": {gpio: 4, mode: out}\n", "aaa",
			"board.pins: invalid pin name"},
		{"port name", "board:\n  ports:\n    My.Port: {device: /dev/ttyUSB0}\n", "My.Port",
			`board.ports: invalid port name "My.Port"`},
		{"port device missing", "board:\n  ports:\n    gps: {baud: 9600}\n", "gps",
			"board.ports.gps: device is required"},
		{"port device empty", "board:\n  ports:\n    gps: {device: \"\"}\n", "\"\"",
			"board.ports.gps.device: must not be empty"},
		{"baud", "board:\n  ports:\n    gps: {device: /dev/ttyUSB0, baud: 11520}\n", "11520",
			"board.ports.gps.baud: 11520 is not a standard baud rate"},
		{"baud zero", "board:\n  ports:\n    gps: {device: /dev/ttyUSB0, baud: 0}\n", "0}",
			"board.ports.gps.baud: 0 is not a standard baud rate"},
		{"two ports one device", "board:\n  ports:\n    a: {device: /dev/ttyUSB0}\n    b: {device: /dev/../dev/ttyUSB0}\n", "/dev/../",
			`board.ports.b.device: "/dev/../dev/ttyUSB0" is already used by port "a"`},
		{"bus device", "board:\n  buses:\n    main: {i2c: i2c1}\n", "i2c1",
			`board.buses.main.i2c: must be a bus number such as "1" or a device such as /dev/i2c-1, found "i2c1"`},
		{"bus missing", "board:\n  buses:\n    main: {}\n", "main",
			"board.buses.main: i2c is required"},
		{"two buses one device", "board:\n  buses:\n    a: {i2c: 1}\n    b: {i2c: /dev/i2c-1}\n", "/dev/i2c-1",
			`board.buses.b.i2c: bus 1 is already configured as "a"`},
		{"serial console is a port", "board:\n  ports:\n    a: {device: /dev/ttyS0}\nconsole:\n  serial: {device: /dev/ttyS0}\n", "serial: {device: ^/dev/ttyS0",
			`console.serial.device: "/dev/ttyS0" is also board port "a"; a serial device is either the console or a port, not both`},
		{"serial console device missing", "console:\n  serial: {baud: 9600}\n", "serial",
			"console.serial: device is required"},
		{"serial console baud", "console:\n  serial: {device: /dev/ttyS0, baud: 115201}\n", "115201",
			"console.serial.baud: 115201 is not a standard baud rate"},
		{"api_url scheme", "telegram:\n  api_url: ftp://api.telegram.org\n", "ftp",
			`telegram.api_url: must be an http or https URL such as https://host/path, found "ftp://api.telegram.org"`},
		{"api_url relative", "telegram:\n  api_url: /bot\n", "/bot",
			"telegram.api_url: must be an http or https URL"},
		{"api_url credentials", "telegram:\n  api_url: https://u:p@example.com\n", "https",
			"telegram.api_url: must not carry credentials"},
		{"allow_users zero", "telegram:\n  allow_users: [5, 0]\n", "0]",
			"telegram.allow_users[1]: 0 is not a Telegram user id (ids are positive numbers)"},
		{"allow_users negative", "telegram:\n  allow_users:\n    - -42\n", "-42",
			"telegram.allow_users[0]: -42 is not a Telegram user id"},
		{"remote kind", "models:\n  remote:\n    - {name: a, kind: gemini, model: m}\n", "gemini",
			`models.remote[0].kind: must be openai or anthropic, found "gemini"`},
		{"remote kind a server", "models:\n  remote:\n    - {name: a, kind: ollama, model: m}\n", "ollama",
			`models.remote[0].kind: "ollama" serves the OpenAI-compatible API: write kind: openai`},
		{"remote kind missing", "models:\n  remote:\n    - {name: a, model: m}\n", "{name",
			"models.remote[0]: kind is required (openai or anthropic)"},
		{"remote name missing", "models:\n  remote:\n    - kind: openai\n      model: m\n", "kind",
			"models.remote[0]: name is required"},
		{"remote model missing", "models:\n  remote:\n    - {name: a, kind: openai}\n", "{name",
			"models.remote[0]: model is required"},
		{"remote model empty", "models:\n  remote:\n    - {name: a, kind: openai, model: ''}\n", "''",
			"models.remote[0].model: must not be empty"},
		{"remote duplicate", "models:\n  remote:\n    - {name: a, kind: openai, model: m}\n    - {name: a, kind: anthropic, model: m}\n", "a, kind: anthropic",
			`models.remote[1].name: duplicate name "a" (also models.remote[0])`},
		{"remote base_url", "models:\n  remote:\n    - {name: a, kind: openai, model: m, base_url: localhost:11434}\n", "localhost",
			`models.remote[0].base_url: must be an http or https URL such as https://host/path, found "localhost:11434"`},
		{"local template", "models:\n  local:\n    path: m.gguf\n    template: chatml\n", "chatml",
			`models.local.template: must be qwen2, qwen2.5 or qwen3, found "chatml"`},
		{"local template empty", "models:\n  local: {path: m.gguf, template: ''}\n", "''",
			`models.local.template: must be qwen2, qwen2.5 or qwen3, found ""`},
		{"local idle_unload negative", "models:\n  local: {path: m.gguf, idle_unload: -1m}\n", "-1m",
			`models.local.idle_unload: must not be negative (0 keeps the model loaded), found -1m`},
		{"router strategy", "models:\n  router:\n    strategy: cheapest\n", "cheapest",
			`models.router.strategy: must be local-first, quality, speed, cost, balanced, fallback or cascade, found "cheapest"`},
		{"local path", "models:\n  local: {threads: 2}\n", "local",
			"models.local: path is required"},
		{"local threads", "models:\n  local: {path: m, threads: 0}\n", "0}",
			"models.local.threads: must be at least 1, found 0"},
		{"local context", "models:\n  local: {path: m, context: -1}\n", "-1}",
			"models.local.context: must be at least 1, found -1"},
		{"env name", "env: [HOME, 2X]\n", "2X",
			`env[1]: "2X" is not an environment variable name`},
		{"env name dash", "env:\n  - MY-VAR\n", "MY-VAR",
			`env[0]: "MY-VAR" is not an environment variable name`},
		{"data_dir empty", "data_dir: ''\n", "''",
			"data_dir: must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			problemAt(t, tc.src, tc.at, tc.msg)
		})
	}
}

func TestEnvSecretNames(t *testing.T) {
	for _, name := range []string{"TELEGRAM_TOKEN", "api_key", "MONKEY", "DB_Secret", "PASSWORD", "my_password_file",
		"MY_PASSWD", "PASS", "CREDENTIALS", "LLM_CRED", "WIFI_PSK", "BASIC_AUTH", "PRIVATE"} {
		src := fmt.Sprintf("env: [HOME, %s]\n", name)
		e := parseError(t, src, nil)
		if len(e.List) != 1 || e.List[0].Line != 1 || e.List[0].Column != 13 ||
			!strings.Contains(e.List[0].Msg, "looks like a secret") || !strings.Contains(e.List[0].Msg, "$env") {
			t.Errorf("env %s: %v", name, e)
		}
	}
	mustParse(t, "env: [HOME, TZ, LANG, _X1]\n")
}

// A variable that feeds a secret field cannot be read through $env,
// whatever its name: "env: [LLM_CRED]" with "api_key: ${LLM_CRED}" let
// $env.LLM_CRED return the key (and the audit store it).
func TestEnvFeedsSecret(t *testing.T) {
	env := map[string]string{"LLM": "sk-x", "BOT": "1:abc", "SITE": "garage"}
	for _, tc := range []struct{ src, at, msg string }{
		{"env: [SITE, LLM]\nmodels:\n  remote:\n    - {name: c, kind: anthropic, model: m, api_key: ${LLM}}\n",
			"LLM]", `env[1]: "LLM" feeds the secret models.remote[0].api_key (line 4, column 53)`},
		{"telegram:\n  token: x${NOPE:-${BOT}}\nenv: [BOT]\n",
			"BOT]", `env[0]: "BOT" feeds the secret telegram.token (line 2, column 11)`},
		{"telegram:\n  token: &t \"${BOT}\"\nmodels:\n  remote: [{name: c, kind: anthropic, model: m, api_key: *t}]\nenv:\n  - BOT\n",
			"BOT\n", `env[0]: "BOT" feeds the secret telegram.token`},
	} {
		line, col := posOf(t, tc.src, tc.at)
		e := parseError(t, tc.src, env)
		if len(e.List) != 1 || e.List[0].Line != line || e.List[0].Column != col || !strings.Contains(e.List[0].Msg, tc.msg) {
			t.Errorf("got %v, want one problem at %d:%d: %s\nsource:\n%s", e, line, col, tc.msg, tc.src)
		}
		if strings.Contains(e.Error(), "sk-x") || strings.Contains(e.Error(), "1:abc") {
			t.Errorf("the error shows a secret: %v", e)
		}
	}
	// A variable used in a non-secret field may be listed.
	c, err := Parse([]byte("env: [SITE]\ndata_dir: /srv/${SITE}\ntelegram: {token: ${BOT}}\n"), "test.yaml", envFrom(env))
	if err != nil || c.DataDir != "/srv/garage" {
		t.Errorf("Parse: %v", err)
	}
}

// Every problem is reported, sorted by position, one per line.
func TestAllProblemsSorted(t *testing.T) {
	src := `models:
  router: {strategy: nope}
board:
  driver: nope
  pins:
    led: {gpio: 17, mode: sideways}
telegram:
  allow_users: [0]
`
	e := parseError(t, src, nil)
	want := []string{
		`test.yaml:2:22: models.router.strategy: must be local-first, quality, speed, cost, balanced, fallback or cascade, found "nope"`,
		`test.yaml:4:11: board.driver: must be sim or periph, found "nope"`,
		`test.yaml:6:27: board.pins.led.mode: must be in or out, found "sideways"`,
		`test.yaml:8:17: telegram.allow_users[0]: 0 is not a Telegram user id (ids are positive numbers)`,
	}
	if got := e.Error(); got != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// A value that failed to decode is not reported a second time by
// validation.
func TestNoCascadingErrors(t *testing.T) {
	e := parseError(t, "board:\n  pins:\n    a: {gpio: x, mode: out}\n    b: {gpio: y, mode: out}\n", nil)
	if len(e.List) != 2 {
		t.Errorf("want 2 problems, got:\n%v", e)
	}
}

func TestProblemString(t *testing.T) {
	p := Problem{File: "a.yaml", Line: 3, Column: 4, Msg: "m"}
	if p.String() != "a.yaml:3:4: m" {
		t.Errorf("%q", p.String())
	}
	p.File = ""
	if p.String() != "3:4: m" {
		t.Errorf("%q", p.String())
	}
}

// What `run` refused only when it used a value (the Telegram client, the
// model providers, the store) is refused by Parse, so that `config check`
// refuses it too, at the value's line and column.
func TestRefusedAsRunWould(t *testing.T) {
	env := map[string]string{"NUL": "a\x00b", "NL": "sk-abc\n", "TOK": "123456:ABC ok"}
	for _, tc := range []struct{ name, src, at, msg string }{
		{"token with inner space", "telegram: {token: \"123456:ABC DEF\"}\n", `"123456`,
			"telegram.token: contains characters a bot token never has"},
		{"token with outer space", "telegram:\n  token: \" 123456:ABC\"\n", `" 123456`,
			"telegram.token: has leading or trailing white space"},
		{"token from env with space", "telegram: {token: ${TOK}}\n", "${TOK}",
			"telegram.token: contains characters a bot token never has"},
		{"token with a slash", "telegram: {token: 123456:AB/C}\n", "123456",
			"telegram.token: contains characters a bot token never has"},
		{"NUL in api_key", "models:\n  remote: [{name: c, kind: anthropic, model: m, api_key: \"sk\\0x\"}]\n", `"sk`,
			"models.remote[0].api_key: holds a NUL character"},
		{"newline in api_key", "models:\n  remote: [{name: c, kind: openai, base_url: http://h/v1, model: m, api_key: \"${NL}\"}]\n", `"${NL}`,
			"models.remote[0].api_key: holds a control character"},
		{"block api_key", "models:\n  remote:\n    - name: c\n      kind: anthropic\n      model: m\n      api_key: |\n        sk-abc\n", "|",
			"models.remote[0].api_key: holds a control character"},
		{"anthropic without key", "models:\n  remote: [{name: c, kind: anthropic, model: m}]\n", "{name",
			"models.remote[0]: api_key is required for kind anthropic"},
		{"NUL in data_dir", "data_dir: ${NUL}\n", "${NUL}", "data_dir: holds a NUL character"},
		{"NUL in a device", "board:\n  ports: {a: {device: \"/dev/tty\\0S0\"}}\n", `"/dev`, "board.ports.a.device: holds a NUL character"},
		{"data_dir in /proc", "data_dir: /proc/self/cwd/data\n", "/proc", "data_dir: \"/proc/self/cwd/data\" is under /proc"},
		{"data_dir is /sys", "data_dir: /sys/\n", "/sys", "is under /sys"},
		{"api_url with a query", "telegram: {api_url: \"https://h/?x=1\"}\n", `"https`, "telegram.api_url: must not have a query"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line, col := posOf(t, tc.src, tc.at)
			e := parseError(t, tc.src, env)
			found := false
			for _, p := range e.List {
				found = found || p.Line == line && p.Column == col && strings.Contains(p.Msg, tc.msg)
			}
			if !found {
				t.Errorf("no problem at %d:%d containing %q; got:\n%v", line, col, tc.msg, e)
			}
			if strings.Contains(e.Error(), "sk-abc") || strings.Contains(e.Error(), "ABC") {
				t.Errorf("the error shows a secret: %v", e)
			}
		})
	}
	mustParse(t, "data_dir: /processes/x\ntelegram: {token: \"123456:ABC-DEF_x\", api_url: \"https://h:8081/base/\"}\n")
}

func TestSkillsSection(t *testing.T) {
	good := "skills:\n  trust: [\"ed25519:" + strings.Repeat("A", 43) + "=\"]\n  allow_unsigned: true\n  prompt_budget: 800\n"
	c, err := Parse([]byte(good), "test.yaml", envFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Skills.Trust) != 1 || !c.Skills.AllowUnsigned || c.Skills.PromptBudget != 800 {
		t.Fatalf("skills = %+v", c.Skills)
	}
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	if back, err := Parse(out, "back.yaml", envFrom(nil)); err != nil || !reflect.DeepEqual(back.Skills, c.Skills) {
		t.Fatalf("written and read back: %+v, %v", back.Skills, err)
	}
	for _, tc := range []struct{ src, want string }{
		{"skills: {trust: [\"ed25519:short\"]}\n", "skills.trust[0]"},
		{"skills: {trust: [\"rsa:AAAA\"]}\n", "want \"ed25519:"},
		{"skills: {prompt_budget: -1}\n", "skills.prompt_budget"},
		{"skills: {alow_unsigned: true}\n", "unknown key \"alow_unsigned\""},
	} {
		if _, err := Parse([]byte(tc.src), "test.yaml", envFrom(nil)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.src, err, tc.want)
		}
	}
}
