package config

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	env := map[string]string{
		"DIR":   "/srv/clawedge",
		"EMPTY": "",
		"PIN":   "23",
		"TRUE":  "true",
		"WEIRD": "a: b\n- c # d {e}",
		"URL":   "http://127.0.0.1:8081",
	}
	for _, tc := range []struct{ src, want string }{
		{"data_dir: ${DIR}", "/srv/clawedge"},
		{"data_dir: ${DIR}/data", "/srv/clawedge/data"},
		{"data_dir: pre-${DIR}-${DIR}", "pre-/srv/clawedge-/srv/clawedge"},
		{"data_dir: ${UNSET:-/var/lib/x}", "/var/lib/x"},
		{"data_dir: ${EMPTY:-fallback}", "fallback"},
		{"data_dir: ${DIR:-fallback}", "/srv/clawedge"},
		{"data_dir: ${UNSET:-a:b}", "a:b"},
		{"data_dir: a$$b", "a$b"},
		{"data_dir: $${DIR}", "${DIR}"},
		{"data_dir: $$$${DIR}", "$${DIR}"},
		{"data_dir: $$${DIR}", "$/srv/clawedge"},
		{"data_dir: cost$5", "cost$5"},
		{"data_dir: a$", "a$"},
		{"data_dir: $HOME", "$HOME"},
		{`data_dir: "${DIR}"`, "/srv/clawedge"},
		{`data_dir: '${DIR} x'`, "/srv/clawedge x"},
		{"data_dir: |\n  ${DIR}\n  two\n", "/srv/clawedge\ntwo\n"},
		{`data_dir: "\x24{DIR}"`, "/srv/clawedge"}, // made by an escape: found after parsing
		// Expansion happens inside a value: nothing in the value can
		// change the structure of the document.
		{"data_dir: ${WEIRD}", "a: b\n- c # d {e}"},
		{"data_dir: '# ${DIR}'", "# /srv/clawedge"},
	} {
		c, err := Parse([]byte(tc.src), "test.yaml", envFrom(env))
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if c.DataDir != tc.want {
			t.Errorf("Parse(%q): data_dir = %q, want %q", tc.src, c.DataDir, tc.want)
		}
	}

	// References in comments and in flow mappings (where YAML itself
	// forbids braces in plain scalars) are handled; typed fields read
	// the expanded text as their type.
	c, err := Parse([]byte(`# ${NOT_SET} in a comment is ignored
board:
  pins: {x: {gpio: ${PIN}, mode: out, active_low: ${TRUE}, max_on: ${UNSET:-90s}}}
telegram: {api_url: "${URL}", allow_users: [${PIN}]}
`), "test.yaml", envFrom(env))
	if err != nil {
		t.Fatal(err)
	}
	if p := c.Board.Pins["x"]; p.GPIO != 23 || !p.ActiveLow || p.MaxOn.String() != "1m30s" {
		t.Errorf("pin = %+v", p)
	}
	if c.Telegram.APIURL != env["URL"] || c.Telegram.AllowUsers[0] != 23 {
		t.Errorf("telegram = %+v", c.Telegram)
	}
}

func TestExpandErrors(t *testing.T) {
	for _, tc := range []struct{ src, at, msg string }{
		{"data_dir: ${NOPE}\n", "${NOPE}",
			"data_dir: environment variable NOPE is not set (write ${NOPE:-default} to give a default)"},
		{"data_dir: /x/${NOPE}/y\n", "${NOPE}", "data_dir: environment variable NOPE is not set"},
		{"board:\n  pins: {led: {gpio: 17, mode: out, max_on: ${NOPE}}}\n", "${NOPE}",
			"board.pins.led.max_on: environment variable NOPE is not set"},
		// Columns count characters, not bytes.
		{"data_dir: \"é€${NOPE}\"\n", "${NOPE}", "data_dir: environment variable NOPE is not set"},
		{"models:\n  remote:\n    - {name: c, kind: anthropic, model: m, api_key: ${ANTHROPIC_KEY}}\n", "${ANTHROPIC_KEY}",
			"models.remote[0].api_key: environment variable ANTHROPIC_KEY is not set"},
		{"data_dir: ${1ABC}\n", "${1ABC}", `data_dir: invalid reference "${1ABC}"`},
		{"data_dir: ${A-B}\n", "${A-B}", `data_dir: invalid reference "${A-B}"`},
		{"data_dir: ${}\n", "${}", `data_dir: invalid reference "${}"`},
		{"data_dir: x${OPEN\n", "x${OPEN", `data_dir: unterminated ${ in "x${OPEN"`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
	e := parseError(t, "board:\n  pins: {led: {gpio: ${PIN_TEXT}, mode: out}}\n", map[string]string{"PIN_TEXT": "seventeen"})
	// The message shows the file as written, never an expanded value.
	if want := `test.yaml:2:22: board.pins.led.gpio: expected an integer, found "${PIN_TEXT}"`; e.Error() != want {
		t.Errorf("got  %v\nwant %s", e, want)
	}
}

// Every unset variable is reported, not just the first.
func TestExpandAllErrors(t *testing.T) {
	e := parseError(t, "data_dir: ${A}${B}\ntelegram: {token: ${C}}\n", nil)
	if len(e.List) != 3 {
		t.Errorf("want 3 problems, got\n%v", e)
	}
}

// A file that contains the private-use character prepare would use as a
// marker, or writes it with an escape, still parses as written.
func TestMarkerCollision(t *testing.T) {
	src := "data_dir: \"\uE000\\uE001${X}\\U0000E002\"\n# \uE003\n"
	c, err := Parse([]byte(src), "test.yaml", envFrom(map[string]string{"X": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if want := "\uE000\uE001x\uE002"; c.DataDir != want {
		t.Errorf("data_dir = %q, want %q", c.DataDir, want)
	}
}

func TestParseNilGetenv(t *testing.T) {
	if _, err := Parse([]byte("data_dir: ${HOME}"), "x.yaml", nil); err == nil {
		t.Errorf("nil getenv resolved a variable")
	}
	if c, err := Parse([]byte("data_dir: ${HOME:-/h}"), "x.yaml", nil); err != nil || c.DataDir != "/h" {
		t.Errorf("got %v, %v", c, err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	t.Setenv("CLAWEDGE_TEST_DIR", "/from/env")
	if err := os.WriteFile(path, []byte("data_dir: ${CLAWEDGE_TEST_DIR}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/from/env" || c.Source != path {
		t.Errorf("Load = %+v", c)
	}

	if _, err := Load(filepath.Join(dir, "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}

	if err := os.WriteFile(path, []byte("board:\n  drive: sim\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = Load(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2:3: ") {
		t.Errorf("error does not name the file: %v", err)
	}

	big := make([]byte, maxFileSize+1)
	for i := range big {
		big[i] = '#'
	}
	if err := os.WriteFile(path, big, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized file: %v", err)
	}
}

func TestFind(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	home := filepath.Join(root, "home")
	xdg := filepath.Join(root, "xdg")
	etc := filepath.Join(root, "etc", "clawedge", "config.yaml")
	for _, d := range []string{work, home, xdg} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(work)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	old := systemConfig
	systemConfig = etc
	t.Cleanup(func() { systemConfig = old })

	find := func(want string) {
		t.Helper()
		got, err := Find()
		if err != nil || got != want {
			t.Errorf("Find() = %q, %v; want %q", got, err, want)
		}
	}
	write := func(p string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	find("") // nothing anywhere: run on the defaults

	write(etc)
	find(etc)

	homeCfg := filepath.Join(home, ".config", "clawedge", "config.yaml")
	write(homeCfg)
	find(homeCfg) // XDG_CONFIG_HOME unset: ~/.config

	xdgCfg := filepath.Join(xdg, "clawedge", "config.yaml")
	write(xdgCfg)
	t.Setenv("XDG_CONFIG_HOME", xdg)
	find(xdgCfg) // XDG_CONFIG_HOME set: it replaces ~/.config

	t.Setenv("XDG_CONFIG_HOME", "relative/dir")
	find(homeCfg) // a relative XDG_CONFIG_HOME is ignored, as the spec says
	t.Setenv("XDG_CONFIG_HOME", xdg)

	write(filepath.Join(work, "clawedge.yaml"))
	find("clawedge.yaml") // the working directory wins

	// A directory where a file should be is an error, not skipped.
	if err := os.Remove(filepath.Join(work, "clawedge.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(work, "clawedge.yaml"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Find(); err == nil {
		t.Errorf("Find accepted a directory")
	}
}

// A default may hold "$$" and references of its own; they are expanded,
// never passed on as they are (or as the placeholder prepare put there:
// "${A:-${B}}" used to yield it, and it was sent as the API key).
func TestNestedDefaults(t *testing.T) {
	env := map[string]string{"B": "/b", "A": "/a", "EMPTY": "", "KEY": "sk-secret-key"}
	for _, tc := range []struct{ src, want string }{
		{"data_dir: ${NOPE:-${B}}", "/b"},
		{"data_dir: ${A:-${B}}", "/a"},
		{"data_dir: ${EMPTY:-${NOPE:-${B}}}/x", "/b/x"},
		{"data_dir: ${NOPE:-${EMPTY:-z}-${B}}", "z-/b"},
		{"data_dir: ${NOPE:-$$}", "$"},
		{"data_dir: ${NOPE:-a$$b}", "a$b"},
		{"data_dir: ${NOPE:-$}", "$"},
		{`data_dir: "${NOPE:-${B}}"`, "/b"},
		{`data_dir: "\x24{NOPE:-${B}}"`, "/b"}, // the outer one made by an escape
		{"data_dir: {x: ${NOPE:-${B}}}", ""},   // a flow mapping: a type error, not a parse error
	} {
		c, err := Parse([]byte(tc.src), "test.yaml", envFrom(env))
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "data_dir: expected a string, found a mapping") {
				t.Errorf("Parse(%q): %v, want a type error", tc.src, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.src, err)
			continue
		}
		if c.DataDir != tc.want {
			t.Errorf("Parse(%q): data_dir = %q, want %q", tc.src, c.DataDir, tc.want)
		}
	}
	// In a flow mapping, where YAML forbids braces in plain scalars.
	c, err := Parse([]byte("models:\n  remote:\n    - {name: c, kind: anthropic, model: m, api_key: ${NOPE:-${KEY}}}\n"), "test.yaml", envFrom(env))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Models.Remote[0].APIKey.Reveal(); got != "sk-secret-key" {
		t.Errorf("api_key = %q, want the value of KEY", got)
	}

	for _, tc := range []struct{ src, at, msg string }{
		{"data_dir: ${NOPE:-${UNSET}}\n", "${NOPE", "data_dir: environment variable UNSET is not set"},
		{"data_dir: ${HOME:-x}}\n", "}^}", "data_dir: a stray } follows ${HOME:-x}"},
		{"data_dir: \"${NOPE:-h}}\"\n", "}^}", "data_dir: a stray } follows ${NOPE:-h}"},
		{"data_dir: ${A:-${B:-${C:-${D:-${E}}}}}\n", "${A", "data_dir: references nest deeper than 4"},
		{"data_dir: \"\\x24{A:-${B:-${C:-${D:-${E}}}}}\"\n", "\"", "data_dir: references nest deeper than 4"},
		{"data_dir: ${NOPE:-${1X}}\n", "${NOPE", `data_dir: invalid reference "${1X}"`},
		{"data_dir: ${NOPE:-${B}\n", "${NOPE", "data_dir: unterminated ${"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

// Matching nested references stays linear: a line of unclosed "${A:-"
// as long as the file size cap is refused at once.
func TestUnclosedReferencesLinear(t *testing.T) {
	// In a block scalar, which the prescan's element count skips.
	data := []byte("data_dir: |\n  " + strings.Repeat("${A:-", maxFileSize/5-4))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Parse(data, "test.yaml", nil)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "nest deeper than 4") {
		t.Fatalf("Parse: %.200v, want a nesting error", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MB, want < 64", alloc>>20)
	}
}
