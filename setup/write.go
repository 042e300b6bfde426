package setup

import (
	"bufio"
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/atomicfile"
)

// setupConfig is what the wizard writes.
type setupConfig struct {
	driver             string
	pins, ports, buses []setupItem
	telegram           bool
	apiURL             string
	owner              int64
	local              string
	remotes            []setupRemote
}

// setupItem is one name=value of a list answer, its value already YAML.
type setupItem struct{ name, yaml string }

type setupRemote struct{ name, kind, baseURL, model, keyEnv string }

func (r setupRemote) config(key string) config.RemoteModel {
	return config.RemoteModel{Name: r.name, Kind: r.kind, BaseURL: r.baseURL, Model: r.model, APIKey: config.Secret(key), Tools: true}
}

// parseSetupList parses "name=value name=value".
func parseSetupList(s string, parse func(name, v string) (string, error)) ([]setupItem, error) {
	var out []setupItem
	seen := map[string]bool{}
	for _, f := range strings.Fields(s) {
		name, v, ok := strings.Cut(f, "=")
		if !ok || !grammar.IsIdent(name) {
			return nil, fmt.Errorf("%q: want name=value, the name a word such as led", f)
		}
		if seen[name] {
			return nil, fmt.Errorf("%q: %s named twice", f, name)
		}
		seen[name] = true
		y, err := parse(name, v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		out = append(out, setupItem{name, y})
	}
	return out, nil
}

func parsePin(_, v string) (string, error) {
	num, mode, _ := strings.Cut(v, ":")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > 53 {
		return "", fmt.Errorf("GPIO %q: want a BCM number 0-53", num)
	}
	switch mode {
	case "out":
		return fmt.Sprintf("{gpio: %d, mode: out, initial: low, safe: low}", n), nil
	case "in", "":
		return fmt.Sprintf("{gpio: %d, mode: in, pull: up, edge: both}", n), nil
	}
	return "", fmt.Errorf("mode %q: want in or out", mode)
}

func parsePort(_, v string) (string, error) {
	dev, baud, _ := strings.Cut(v, ":")
	b, err := strconv.Atoi(cmp.Or(baud, "115200"))
	if !strings.HasPrefix(dev, "/dev/") || err != nil || b <= 0 {
		return "", fmt.Errorf("%q: want /dev/ttyX:baud", v)
	}
	return fmt.Sprintf("{device: %s, baud: %d}", strconv.Quote(dev), b), nil
}

func parseBus(_, v string) (string, error) {
	if _, err := strconv.Atoi(v); err != nil {
		return "", fmt.Errorf("%q: want the bus number of /dev/i2c-N", v)
	}
	return fmt.Sprintf("{i2c: %q}", v), nil
}

func parseRemote(s string) (setupRemote, error) {
	var r setupRemote
	for _, kv := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "name":
			r.name = v
		case "kind":
			r.kind = v
		case "url":
			r.baseURL = v
		case "model":
			r.model = v
		case "key-env":
			r.keyEnv = v
		default:
			return r, fmt.Errorf("--remote %q: unknown field %q (want name, kind, url, model, key-env)", s, k)
		}
	}
	if r.name == "" || r.model == "" || (r.kind != "openai" && r.kind != "anthropic") {
		return r, fmt.Errorf("--remote %q: want name=N,kind=openai|anthropic,url=URL,model=M[,key-env=VAR]", s)
	}
	if r.keyEnv == "" {
		r.keyEnv = keyEnv(r.name)
	}
	return r, nil
}

// oldPins and the like turn the config being changed into the answers'
// form, as defaults.
func oldPins(c *config.Config, def string) string {
	if len(c.Board.Pins) == 0 {
		return def
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Board.Pins)) {
		out = append(out, fmt.Sprintf("%s=%d:%s", name, c.Board.Pins[name].GPIO, c.Board.Pins[name].Mode))
	}
	return strings.Join(out, " ")
}

func oldPorts(c *config.Config, def string) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Board.Ports)) {
		out = append(out, fmt.Sprintf("%s=%s:%d", name, c.Board.Ports[name].Device, c.Board.Ports[name].Baud))
	}
	return cmp.Or(strings.Join(out, " "), def)
}

func oldBuses(c *config.Config, def string) string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(c.Board.Buses)) {
		out = append(out, fmt.Sprintf("%s=%s", name, c.Board.Buses[name].I2C))
	}
	return cmp.Or(strings.Join(out, " "), def)
}

// write writes the config (the old one kept as .bak) and the secrets file.
func (s *Wizard) write() error {
	wrote, err := writeConfig(s.path, s.w, s.old, s.dataDir(), s.secrets)
	if err != nil {
		return err
	}
	for k, v := range s.secrets {
		os.Setenv(k, v) // for the doctor run that follows
	}
	fmt.Fprintf(s.out, "\n%s\n", wrote)
	return nil
}

// writeConfig writes the commented config of w at path (the previous file
// kept as .bak) and its secrets into clawedge.env beside it: the one writer
// of the wizard and of the dashboard's setup page (setup/write). It returns
// what it wrote, to tell the person.
func writeConfig(path string, w setupConfig, old *config.Config, dataDir string, secrets map[string]string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, `# clawedge configuration, written by clawedge setup (run it again to change
# it; the previous file is kept as %[1]s.bak). Check it with
#   clawedge config check %[1]s
# Secrets are not in this file: ${NAME} values come from the environment.
# setup put them in this file, readable by its owner only:
#   %[2]s
# For the service: sudo systemctl edit clawedge, then add
#   [Service]
#   EnvironmentFile=%[2]s
# In a shell: set -a; . %[2]s; set +a
`, filepath.Base(path), absPath(envFilePath(path)))
	if old != nil {
		dataDir = old.DataDir
	}
	fmt.Fprintf(&b, "\n# The store (audit trail, state) and downloaded models.\ndata_dir: %s\n", strconv.Quote(dataDir))
	b.WriteString(boardYAML(w))
	if w.telegram {
		b.WriteString("\ntelegram:\n  # The bot's token, from @BotFather: in the environment, never here.\n  token: ${TELEGRAM_TOKEN}\n")
		if w.apiURL != "" {
			fmt.Fprintf(&b, "  api_url: %s\n", strconv.Quote(w.apiURL))
		}
		if w.owner != 0 {
			fmt.Fprintf(&b, "  # Who may talk to the bot: the owner, learnt from their /start.\n  allow_users: [%d]\n", w.owner)
		} else {
			b.WriteString("  # Nobody may talk to the bot until their user id is here.\n  allow_users: []\n")
		}
	}
	if w.local != "" || len(w.remotes) > 0 {
		b.WriteString("\nmodels:\n")
	}
	if w.local != "" {
		fmt.Fprintf(&b, "  # A GGUF file run by clawedge-llm on this board.\n  local: {path: %s}\n", strconv.Quote(w.local))
	}
	if len(w.remotes) > 0 {
		b.WriteString("  # Remote models; their keys come from the environment.\n  remote:\n")
		for _, r := range w.remotes {
			fmt.Fprintf(&b, "    - name: %s\n      kind: %s\n", strconv.Quote(r.name), r.kind)
			if r.baseURL != "" {
				fmt.Fprintf(&b, "      base_url: %s\n", strconv.Quote(r.baseURL))
			}
			fmt.Fprintf(&b, "      model: %s\n", strconv.Quote(r.model))
			if secrets[r.keyEnv] != "" {
				fmt.Fprintf(&b, "      api_key: ${%s}\n", r.keyEnv)
			}
		}
	}
	if prev, err := os.ReadFile(path); err == nil {
		b.WriteString(keptSections(prev))
	}
	// What is written must load: a mistake here is a bug of setup, caught
	// before it replaces a working file.
	if _, err := config.Parse([]byte(b.String()), path, func(k string) (string, bool) {
		if v, ok := secrets[k]; ok {
			return v, true
		}
		return os.LookupEnv(k) // a kept section's own ${VAR}s
	}); err != nil {
		return "", fmt.Errorf("setup: the config it made does not load (a bug): %w", err)
	}
	if err := writeEnvFile(envFilePath(path), secrets); err != nil {
		return "", err
	}
	// The old file is copied, not moved, to .bak: at every instant the board
	// has a config, the old one until the new one's rename (a power cut
	// between a move and the write used to leave none).
	if _, err := os.Stat(path); err == nil {
		if err := atomicfile.Copy(path, path+".bak"); err != nil {
			return "", err
		}
	}
	if err := atomicfile.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return "", err
	}
	wrote := "Wrote " + path
	if len(secrets) > 0 {
		wrote += " and the secrets to " + envFilePath(path) + " (mode 0600)"
	}
	return wrote, nil
}

// asked are the config's top-level keys setup writes; every other section
// of the file it replaces is kept as it was (keptSections).
var asked = map[string]bool{"data_dir": true, "board": true, "telegram": true, "models": true}

// keptSections is the text of prev's top-level sections that setup does
// not ask about (the dashboard, the policy, the consoles...), each with the
// comment lines just above it, in their order: setup changes what it asks,
// never the rest of the file.
func keptSections(prev []byte) string {
	var out, pending strings.Builder
	keep := false
	for _, line := range strings.SplitAfter(string(prev), "\n") {
		switch {
		case strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#"):
			if keep && strings.HasPrefix(line, " ") { // inside a kept block
				out.WriteString(line)
			} else {
				pending.WriteString(line)
			}
			continue
		case line[0] != ' ' && line[0] != '\t' && line[0] != '-':
			key, _, _ := strings.Cut(line, ":")
			keep = !asked[strings.TrimSpace(key)]
		}
		if keep {
			out.WriteString(pending.String())
			out.WriteString(line)
		}
		pending.Reset()
	}
	if out.Len() == 0 {
		return ""
	}
	text := strings.TrimRight(out.String(), "\n") + "\n"
	return "\n# Kept as it was in the previous file (setup does not ask about these):\n" + strings.TrimLeft(text, "\n")
}

// writeItems writes name: value lines sorted by name, as a re-run reads them.
// boardYAML is the board section of the config.
func boardYAML(w setupConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
board:
  # sim: a simulated board; periph: this board's GPIO, serial and I2C devices.
  driver: %s
  # The pins tools may use, by name (BCM numbers). Nothing else can be touched.
  pins:
`, w.driver)
	writeItems(&b, w.pins)
	if len(w.ports) > 0 {
		b.WriteString("  # Serial ports the serial tools may open, by name.\n  ports:\n")
		writeItems(&b, w.ports)
	}
	if len(w.buses) > 0 {
		b.WriteString("  # I2C buses, by name.\n  buses:\n")
		writeItems(&b, w.buses)
	}
	return b.String()
}

// checkBoard says what the config would refuse in the board answers.
func checkBoard(w setupConfig) error {
	_, err := config.Parse([]byte(boardYAML(w)), "the board answers", func(string) (string, bool) { return "", false })
	return err
}

func writeItems(b *strings.Builder, items []setupItem) {
	items = append([]setupItem(nil), items...)
	sort.Slice(items, func(i, j int) bool { return items[i].name < items[j].name })
	for _, it := range items {
		fmt.Fprintf(b, "    %s: %s\n", it.name, it.yaml)
	}
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// envFilePath is clawedge.env beside the config.
func envFilePath(cfg string) string { return filepath.Join(filepath.Dir(cfg), "clawedge.env") }

// readEnvFile reads NAME=value lines; a missing file is empty.
func readEnvFile(path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				v = v[1 : len(v)-1]
			}
			out[k] = v
		}
	}
	return out
}

// writeEnvFile writes the secrets readable by this user only; systemd's
// EnvironmentFile= and a shell's `.` both read it.
func writeEnvFile(path string, secrets map[string]string) error {
	if len(secrets) == 0 {
		os.Remove(path)
		return nil
	}
	keys := make([]string, 0, len(secrets))
	for k := range secrets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# Secrets of clawedge, written by clawedge setup. Keep this file private.\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, shellQuote(secrets[k]))
	}
	return atomicfile.WriteFile(path, []byte(b.String()), 0o600)
}

// shellQuote single-quotes a value for sh and systemd alike; setup refuses
// secrets holding a quote or a newline, which the two read differently.
func shellQuote(s string) string { return "'" + s + "'" }

// echoOff turns the terminal's echo off while a secret is typed; it returns
// the function that turns it back on. Not a terminal: nothing to do.
func echoOff(f *os.File) func() {
	if f == nil {
		return func() {}
	}
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}
	}
	quiet := *t
	quiet.Lflag &^= unix.ECHO
	if unix.IoctlSetTermios(fd, unix.TCSETS, &quiet) != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, t) }
}

// dataDir is data_dir: the config's, else data/ beside the config.
func (s *Wizard) dataDir() string {
	if s.old != nil {
		return s.old.DataDir
	}
	return filepath.Join(filepath.Dir(absPath(s.path)), "data")
}
