package config

import (
	"cmp"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Semantic validation. Each problem is reported at the offending value
// (or, when a required key is missing, at the key of the thing missing
// it), using the positions the decoder recorded. Values that came from
// the defaults rather than the file have no position of their own and are
// reported at their nearest ancestor that the file does have.

var (
	drivers = []string{"sim", "periph"}
	modes   = []string{"in", "out"}
	pulls   = []string{"none", "up", "down"}
	edges   = []string{"none", "rising", "falling", "both"}
	levels  = []string{"low", "high"}
	kinds   = []string{"openai", "anthropic"}
	// openAICompatible are servers refused as a kind with the hint to write
	// openai: one spelling per API keeps the config's meaning plain.
	openAICompatible = []string{"ollama", "llama-server", "llama.cpp", "llamacpp", "vllm", "lmstudio", "localai"}
	templates        = []string{"qwen2", "qwen2.5", "qwen3"} // localmodel/chat.Families
	strategies       = []string{"local-first", "quality", "speed", "cost", "balanced", "fallback", "cascade"}
	// constraints are how an openai-kind server is asked to constrain
	// its reply (llm/openai). strategies above are llm/router.Strategies.
	constraints = []string{"none", "gbnf", "json_schema", "ollama"}

	// standardBauds are the rates Linux termios can set without the
	// BOTHER escape hatch; anything else is almost always a typo
	// (11520, 9660) that would show up as garbage on the line.
	standardBauds = []int{50, 75, 110, 134, 150, 200, 300, 600, 1200, 1800, 2400, 4800,
		9600, 19200, 38400, 57600, 115200, 230400, 460800, 500000, 576000, 921600,
		1000000, 1152000, 1500000, 2000000, 2500000, 3000000, 3500000, 4000000}

	// nameRE is what pin, port and bus names look like: they are typed
	// in the command language (@gpio/write{pin=relay}) and shown to the
	// model, so they stay short, lowercase and unambiguous.
	nameRE = shortRE{regexp.MustCompile(`^[a-z][a-z0-9_-]*$`), 32}

	// i2cRE accepts a bus number or its character device.
	i2cRE = regexp.MustCompile(`^(?:[0-9]+|/dev/i2c-[0-9]+)$`)

	// secretWords mark environment variable names that must not be
	// exposed through $env: PASS covers PASSWD and PASSPHRASE, CRED
	// CREDENTIALS. A false alarm costs a rename; a miss leaks a secret.
	secretWords = []string{"TOKEN", "KEY", "SECRET", "PASS", "CRED", "PSK", "AUTH", "PRIVATE"}
)

// GPIO number ranges by driver. The simulated board models the 40-pin
// header, whose BCM GPIOs are 0-27; periph addresses Linux GPIO lines,
// which go higher on boards with expanders.
const (
	maxGPIOSim    = 27
	maxGPIOPeriph = 1023
)

// parent is the path one level up: "a.b[0].c" → "a.b[0]" → "a.b" → "a".
func parent(path string) string {
	i := strings.LastIndexAny(path, ".[")
	if i < 0 {
		return ""
	}
	return path[:i]
}

// at is where the value at path is, or where it would be.
func (d *decoder) at(path string) pos {
	if l, ok := d.locs[path]; ok {
		return l.at
	}
	return d.keyAt(parent(path))
}

// keyAt is where the key of path (or of its nearest recorded ancestor) is.
func (d *decoder) keyAt(path string) pos {
	for p := path; p != ""; p = parent(p) {
		if l, ok := d.locs[p]; ok {
			return l.key
		}
	}
	return pos{1, 1}
}

// has reports whether the file set path (to something other than null).
func (d *decoder) has(path string) bool {
	_, ok := d.locs[path]
	return ok
}

// quote shows a string value for a message: as written in the file when
// it came from there (so that no expanded value is ever shown), else the
// value itself, which is then a built-in default.
func (d *decoder) quote(path, v string) string {
	if l, ok := d.locs[path]; ok {
		return strconv.Quote(l.raw)
	}
	return strconv.Quote(v)
}

// errf reports a problem with the value at path, unless decoding already
// reported one there.
func (d *decoder) errf(path, format string, args ...any) {
	if d.failed[path] {
		return
	}
	d.add(d.at(path), "%s: %s", path, fmt.Sprintf(format, args...))
}

// missing reports a required key that is absent, at its parent's key.
func (d *decoder) missing(path, what string) {
	if d.failed[path] || d.failed[parent(path)] {
		return
	}
	d.add(d.keyAt(parent(path)), "%s: %s is required%s", parent(path), path[strings.LastIndexByte(path, '.')+1:], what)
}

// oneOf checks an enumerated string value.
func (d *decoder) oneOf(path, v string, valid []string) bool {
	if slices.Contains(valid, v) {
		return true
	}
	d.errf(path, "must be %s, found %s", alternatives(valid), d.quote(path, v))
	return false
}

// alternatives formats ["a","b","c"] as "a, b or c".
func alternatives(vs []string) string {
	if len(vs) == 1 {
		return vs[0]
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " or " + vs[len(vs)-1]
}

// byPosition orders map keys as they appear in the file, so that "already
// used by" always names the earlier entry and errors read top to bottom.
func byPosition[V any](d *decoder, prefix string, m map[string]V) []string {
	names := sortedKeys(m)
	slices.SortStableFunc(names, func(a, b string) int {
		pa, pb := d.keyAt(prefix+a), d.keyAt(prefix+b)
		if c := cmp.Compare(pa.line, pb.line); c != 0 {
			return c
		}
		return cmp.Compare(pa.col, pb.col)
	})
	return names
}

func (d *decoder) validate(c *Config) {
	if c.DataDir == "" {
		d.errf("data_dir", "must not be empty")
	}
	for _, fs := range []string{"/proc", "/sys"} {
		if p := filepath.Clean(c.DataDir); p == fs || strings.HasPrefix(p, fs+"/") {
			d.errf("data_dir", "%s is under %s, a kernel file system where no store can be kept", d.quote("data_dir", c.DataDir), fs)
		}
	}
	d.validateEnv(c.Env)
	d.validateBoard(&c.Board)
	d.validateConsole(&c.Console, &c.Board)
	d.validateTelegram(&c.Telegram, &c.Board)
	d.validateModels(&c.Models)
	d.validatePolicy(&c.Policy, &c.Agent) // policy.go
	d.validateAutomations(c)              // automations.go
	d.validateMQTT(c)                     // mqtt.go
	d.validateMetrics(c.Metrics)          // metrics.go
	d.validateUpdate(c.Update)            // update.go
	d.validateExec(&c.Exec)               // exec.go
	d.validateSecrets(&c.Secrets)         // secrets.go
	d.validateMCP(c.MCP)                  // mcp.go
	d.validateNetwork(&c.Network)         // network.go
}

// varUse is where an environment variable feeds a secret field.
type varUse struct {
	path string
	at   pos
}

func (d *decoder) validateEnv(env []string) {
	for i, name := range env {
		path := fmt.Sprintf("env[%d]", i)
		if !validEnvName(name) {
			d.errf(path, "%s is not an environment variable name (letters, digits and _, not starting with a digit)", d.quote(path, name))
			continue
		}
		if use, ok := d.secretVars[name]; ok {
			d.errf(path, "%s feeds the secret %s (line %d, column %d): variables listed in env can be read by anyone who can type a command, and by the model, through $env, so it must not be listed", d.quote(path, name), use.path, use.at.line, use.at.col)
			continue
		}
		upper := strings.ToUpper(name)
		for _, w := range secretWords {
			if strings.Contains(upper, w) {
				d.errf(path, "%s looks like a secret (its name contains %s): variables listed in env can be read by anyone who can type a command, and by the model, through $env, so secrets must not be listed", d.quote(path, name), w)
				break
			}
		}
	}
}

func (d *decoder) validateBoard(b *Board) {
	driverOK := d.oneOf("board.driver", b.Driver, drivers)
	maxGPIO := maxGPIOSim
	if b.Driver == "periph" {
		maxGPIO = maxGPIOPeriph
	}

	usedGPIO := map[int]string{}
	for _, name := range byPosition(d, "board.pins.", b.Pins) {
		p := b.Pins[name]
		path := "board.pins." + name
		d.checkName("board.pins", name, "pin")

		if d.has(path+".gpio") || d.failed[path+".gpio"] {
			switch {
			case d.failed[path+".gpio"]:
			case !driverOK:
				// The range depends on the driver, which is wrong.
			case p.GPIO < 0 || p.GPIO > maxGPIO:
				why := "the BCM GPIO numbers of the 40-pin header"
				if b.Driver == "periph" {
					why = "Linux GPIO line offsets"
				}
				d.errf(path+".gpio", "GPIO %d is out of range for the %s driver (0..%d: %s)", p.GPIO, b.Driver, maxGPIO, why)
			default:
				if other, dup := usedGPIO[p.GPIO]; dup {
					d.errf(path+".gpio", "GPIO %d is already used by pin %q", p.GPIO, other)
				} else {
					usedGPIO[p.GPIO] = name
				}
			}
		} else if d.has(path) {
			d.missing(path+".gpio", " (the BCM GPIO number)")
		} else if _, dup := usedGPIO[p.GPIO]; !dup {
			usedGPIO[p.GPIO] = name // a default pin
		}

		modeOK := false
		if p.Mode == "" && !d.has(path+".mode") {
			d.missing(path+".mode", " (in or out)")
		} else {
			modeOK = d.oneOf(path+".mode", p.Mode, modes)
		}

		// A pin is either an input or an output. Settings of the other
		// direction are refused rather than ignored: "edge: both" on an
		// output means the user believes they will get events, and
		// "safe: low" on an input means they believe it is driven.
		for _, f := range []struct {
			key, v string
			valid  []string
			dir    string
		}{
			{"pull", p.Pull, pulls, "in"},
			{"edge", p.Edge, edges, "in"},
			{"initial", p.Initial, levels, "out"},
			{"safe", p.Safe, levels, "out"},
		} {
			fp := path + "." + f.key
			if !d.has(fp) {
				continue
			}
			if modeOK && p.Mode != f.dir {
				d.errf(fp, "%s applies to %s pins, and %q is an %s pin (mode: %s): it cannot be both in and out", f.key, direction(f.dir), name, direction(p.Mode), p.Mode)
				continue
			}
			d.oneOf(fp, f.v, f.valid)
		}
		if fp := path + ".max_on"; d.has(fp) {
			switch {
			case modeOK && p.Mode == "in":
				d.errf(fp, "max_on applies to output pins, and %q is an input pin (mode: in): it cannot be both in and out", name)
			case p.MaxOn <= 0:
				d.errf(fp, "must be greater than zero (leave max_on out for no limit)")
			}
		}
	}

	usedDevice := map[string]string{}
	for _, name := range byPosition(d, "board.ports.", b.Ports) {
		p := b.Ports[name]
		path := "board.ports." + name
		d.checkName("board.ports", name, "port")
		if p.Device == "" {
			if d.has(path + ".device") {
				d.errf(path+".device", "must not be empty")
			} else {
				d.missing(path+".device", " (such as /dev/ttyUSB0)")
			}
		} else {
			dev := filepath.Clean(p.Device)
			if other, dup := usedDevice[dev]; dup {
				d.errf(path+".device", "%s is already used by port %q", d.quote(path+".device", p.Device), other)
			} else {
				usedDevice[dev] = name
			}
		}
		d.checkBaud(path+".baud", p.Baud)
	}

	usedBus := map[string]string{}
	for _, name := range byPosition(d, "board.buses.", b.Buses) {
		bus := b.Buses[name]
		path := "board.buses." + name
		d.checkName("board.buses", name, "bus")
		switch {
		case !d.has(path + ".i2c"):
			d.missing(path+".i2c", ` (a bus number such as "1", or /dev/i2c-1)`)
		case !i2cRE.MatchString(bus.I2C):
			d.errf(path+".i2c", `must be a bus number such as "1" or a device such as /dev/i2c-1, found %s`, d.quote(path+".i2c", bus.I2C))
		default:
			dev := strings.TrimPrefix(bus.I2C, "/dev/i2c-")
			if n, err := strconv.Atoi(dev); err == nil {
				dev = strconv.Itoa(n) // "01" is bus 1
			}
			if other, dup := usedBus[dev]; dup {
				d.errf(path+".i2c", "bus %s is already configured as %q", dev, other)
			} else {
				usedBus[dev] = name
			}
		}
	}
}

func direction(mode string) string {
	if mode == "in" {
		return "input"
	}
	return "output"
}

// checkName validates a pin, port or bus name, at its key.
func (d *decoder) checkName(section, name, what string) {
	if !nameRE.MatchString(name) {
		d.add(d.keyAt(section+"."+name), "%s: invalid %s name %q: names are 1 to 32 lowercase letters, digits, _ and -, starting with a letter", section, what, name)
	}
}

func (d *decoder) checkBaud(path string, baud int) {
	if !slices.Contains(standardBauds, baud) {
		d.errf(path, "%d is not a standard baud rate (such as 9600, 19200, 38400, 57600, 115200 or 230400)", baud)
	}
}

func (d *decoder) validateConsole(c *Console, b *Board) {
	s := c.Serial
	if s == nil {
		return
	}
	const path = "console.serial"
	switch {
	case s.Device == "" && !d.has(path+".device"):
		d.missing(path+".device", " (such as /dev/ttyS0)")
	case s.Device == "":
		d.errf(path+".device", "must not be empty")
	default:
		// One process cannot both chat and run tools over the same
		// line: tool traffic would land in the console and vice versa.
		for _, name := range byPosition(d, "board.ports.", b.Ports) {
			if filepath.Clean(b.Ports[name].Device) == filepath.Clean(s.Device) {
				d.errf(path+".device", "%s is also board port %q; a serial device is either the console or a port, not both", d.quote(path+".device", s.Device), name)
				break
			}
		}
	}
	d.checkBaud(path+".baud", s.Baud)
}

func (d *decoder) validateTelegram(t *Telegram, b *Board) {
	if d.checkURL("telegram.api_url", t.APIURL) {
		// The Bot API's method names are appended to the path.
		if u, _ := url.Parse(t.APIURL); u.RawQuery != "" || u.Fragment != "" || strings.Contains(t.APIURL, "#") {
			d.errf("telegram.api_url", "must not have a query (?) or fragment (#): method names are appended to the path")
		}
	}
	// A bot token goes into every request's URL path. Its value is
	// never shown; the check names what is wrong with it.
	switch tok := t.Token.Reveal(); {
	case tok == "":
	case strings.TrimSpace(tok) != tok:
		d.errf("telegram.token", "has leading or trailing white space")
	case strings.ContainsAny(tok, "/?#%@ \t"):
		d.errf("telegram.token", "contains characters a bot token never has (/ ? # %% @ or white space)")
	}
	for i, id := range t.AllowUsers {
		if id <= 0 {
			d.errf(fmt.Sprintf("telegram.allow_users[%d]", i), "%d is not a Telegram user id (ids are positive numbers)", id)
		}
	}
	for i, id := range t.AllowChats {
		if id >= 0 {
			d.errf(fmt.Sprintf("telegram.allow_chats[%d]", i), "%d is not a group chat id (group ids are negative numbers, such as -1001234567890; people go in allow_users)", id)
		}
	}
	for i, n := range t.Notify {
		path := fmt.Sprintf("telegram.notify[%d]", i)
		if d.failed[path] {
			continue
		}
		pinEdge := ""
		switch p, ok := b.Pins[n.Pin]; {
		case n.Pin == "":
			d.required(path, "pin", " (an input pin with edge detection)")
		case !ok:
			d.errf(path+".pin", "%s is not a configured pin (pins: %s)", d.quote(path+".pin", n.Pin), strings.Join(sortedKeys(b.Pins), ", "))
		case p.Mode != "in":
			d.errf(path+".pin", "pin %q is an output; only input pins have edges to notify", n.Pin)
		case p.Edge == "" || p.Edge == "none":
			d.errf(path+".pin", "pin %q has no edge detection (set edge: both on board.pins.%s)", n.Pin, n.Pin)
		default:
			pinEdge = p.Edge
		}
		if d.has(path + ".edge") {
			if d.oneOf(path+".edge", n.Edge, edges[1:]) && pinEdge != "" && pinEdge != "both" && pinEdge != n.Edge {
				d.errf(path+".edge", "pin %q detects %s edges only (edge: %s), so it never reports %s ones", n.Pin, pinEdge, pinEdge, n.Edge)
			}
		}
		for j, id := range n.Users {
			up := fmt.Sprintf("%s.users[%d]", path, j)
			switch {
			case id <= 0:
				d.errf(up, "%d is not a Telegram user id (ids are positive numbers)", id)
			case !slices.Contains(t.AllowUsers, id):
				d.errf(up, "user %d is not in telegram.allow_users; board events go only to allowed users", id)
			}
		}
		if len(n.Users) == 0 && !d.has(path+".users") && len(t.AllowUsers) == 0 {
			d.add(d.keyAt(path), "%s: nobody to notify: list users, or set telegram.allow_users", path)
		}
	}
}

// checkURL requires an absolute http or https URL, and reports whether it
// is one. Credentials in the URL are refused: URLs get logged, and
// secrets must not be (use api_key).
func (d *decoder) checkURL(path, s string) bool {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" || strings.ContainsAny(s, " \t\r\n") {
		d.errf(path, "must be an http or https URL such as https://host/path, found %s", d.quote(path, s))
		return false
	}
	if u.User != nil {
		d.errf(path, "must not carry credentials (user:password@): URLs are logged; use api_key")
		return false
	}
	return true
}

func (d *decoder) validateModels(m *Models) {
	if l := m.Local; l != nil {
		const path = "models.local"
		if l.Path == "" {
			if d.has(path + ".path") {
				d.errf(path+".path", "must not be empty")
			} else {
				d.missing(path+".path", " (the GGUF model file)")
			}
		}
		if l.Threads < 1 {
			d.errf(path+".threads", "must be at least 1, found %d", l.Threads)
		}
		if l.Context < 1 {
			d.errf(path+".context", "must be at least 1, found %d", l.Context)
		}
		if d.has(path + ".template") {
			d.oneOf(path+".template", l.Template, templates)
		}
		if l.IdleUnload < 0 {
			d.errf(path+".idle_unload", "must not be negative (0 keeps the model loaded), found %s", l.IdleUnload)
		}
		d.checkScore(path+".quality", l.Quality)
		d.checkScore(path+".speed", l.Speed)
	}

	names := map[string]int{}
	for i, r := range m.Remote {
		path := fmt.Sprintf("models.remote[%d]", i)
		if d.failed[path] {
			continue
		}
		if r.Name == "" {
			d.required(path, "name", ` (how the router and logs refer to it)`)
		} else if r.Name == "local" {
			d.errf(path+".name", `"local" is the name of the local model (models.local); choose another`)
		} else if j, dup := names[r.Name]; dup {
			d.errf(path+".name", "duplicate name %s (also models.remote[%d])", d.quote(path+".name", r.Name), j)
		} else {
			names[r.Name] = i
		}
		switch {
		case r.Kind == "":
			d.required(path, "kind", " (openai or anthropic)")
		case slices.Contains(openAICompatible, r.Kind):
			// The servers people name instead of the API they speak.
			d.errf(path+".kind", "%s serves the OpenAI-compatible API: write kind: openai, with base_url http://HOST:PORT/v1 (docs/remote-models.md)", d.quote(path+".kind", r.Kind))
		default:
			d.oneOf(path+".kind", r.Kind, kinds)
		}
		if r.Model == "" {
			d.required(path, "model", " (the provider's model id)")
		}
		if r.Kind == "anthropic" && r.APIKey == "" && !d.failed[path+".api_key"] {
			d.required(path, "api_key", " for kind anthropic (the Anthropic API takes no request without one)")
		}
		switch {
		case r.Kind == "openai" && r.BaseURL == "" && !d.failed[path+".base_url"]:
			d.required(path, "base_url", " for kind openai (the server's endpoint, such as http://192.168.1.10:11434/v1)")
		case d.has(path + ".base_url"):
			d.checkURL(path+".base_url", r.BaseURL)
		}
		if d.has(path+".context") && r.Context < 1 {
			d.errf(path+".context", "must be at least 1, found %d (leave context out if the window is not known)", r.Context)
		}
		for _, c := range []struct {
			key string
			v   float64
		}{{"cost_in", r.CostIn}, {"cost_out", r.CostOut}} {
			if c.v < 0 {
				d.errf(path+"."+c.key, "must not be negative (a cost per 1,000 tokens), found %g", c.v)
			}
		}
		d.checkScore(path+".quality", r.Quality)
		d.checkScore(path+".speed", r.Speed)
		if d.has(path + ".constraint") {
			if r.Kind == "anthropic" {
				d.errf(path+".constraint", "applies to kind openai only: the Anthropic API takes no grammar or schema")
			} else {
				d.oneOf(path+".constraint", r.Constraint, constraints)
			}
		}
		if r.Temperature < 0 || r.Temperature > 2 {
			d.errf(path+".temperature", "must be from 0 (greedy) to 2, found %g", r.Temperature)
		}
		if d.has(path+".seed") && r.Kind == "anthropic" {
			d.errf(path+".seed", "applies to kind openai only: the Anthropic API takes no seed")
		}
		if d.has(path+".timeout") && r.Timeout <= 0 {
			d.errf(path+".timeout", "must be greater than zero (leave timeout out for the provider's default), found %s", r.Timeout)
		}
	}

	d.oneOf("models.router.strategy", m.Router.Strategy, strategies)
	known := []string{}
	if m.Local != nil {
		known = append(known, "local")
	}
	for _, r := range m.Remote {
		if r.Name != "" && r.Name != "local" {
			known = append(known, r.Name)
		}
	}
	seen := map[string]int{}
	for i, name := range m.Router.Order {
		path := fmt.Sprintf("models.router.order[%d]", i)
		if d.failed[path] {
			continue
		}
		switch j, dup := seen[name]; {
		case !slices.Contains(known, name):
			models := "none are configured"
			if len(known) > 0 {
				models = "models: " + strings.Join(known, ", ")
			}
			d.errf(path, "%s is not a configured model (%s)", d.quote(path, name), models)
		case dup:
			d.errf(path, "%s is already listed (models.router.order[%d])", d.quote(path, name), j)
		default:
			seen[name] = i
		}
	}
	if m.Router.LocalQueueBudget < 0 {
		d.errf("models.router.local_queue_budget", "must not be negative (0 waits for the local model), found %s", m.Router.LocalQueueBudget)
	}
}

// checkScore checks a router score, when the file sets it.
func (d *decoder) checkScore(path string, v float64) {
	if d.has(path) && (v < 1 || v > 10) {
		d.errf(path, "must be from 1 to 10 (10 best), found %g", v)
	}
}

// required reports a missing or empty required string of a list item:
// at the item when the key is absent, at the value when it is empty.
func (d *decoder) required(item, key, what string) {
	path := item + "." + key
	if d.has(path) {
		d.errf(path, "must not be empty")
		return
	}
	if d.failed[path] {
		return
	}
	d.add(d.keyAt(item), "%s: %s is required%s", item, key, what)
}

// shortRE is a pattern and a length limit in bytes, checked apart: a counted
// repetition such as {1,64} compiles to a regexp state per repetition, 11 to
// 27 kB of heap each for the daemon's life; `+` and a length check do not.
type shortRE struct {
	re  *regexp.Regexp
	max int
}

func (s shortRE) MatchString(v string) bool { return len(v) <= s.max && s.re.MatchString(v) }
