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

	// nameRE is what pin, port and bus names look like: they are typed
	// in the command language (@gpio/write{pin=relay}) and shown to the
	// model, so they stay short, lowercase and unambiguous.
	nameRE = shortRE{regexp.MustCompile(`^[a-z][a-z0-9_-]*$`), 32}

	// secretWords mark environment variable names that must not be
	// exposed through $env: PASS covers PASSWD and PASSPHRASE, CRED
	// CREDENTIALS. A false alarm costs a rename; a miss leaks a secret.
	secretWords = []string{"TOKEN", "KEY", "SECRET", "PASS", "CRED", "PSK", "AUTH", "PRIVATE"}
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
	d.validateBoard(&c.Board)                 // board.go
	d.validateConsole(&c.Console, &c.Board)   // console.go
	d.validateTelegram(&c.Telegram, &c.Board) // telegram.go
	d.validateModels(&c.Models, &c.Agent)     // models.go
	d.validatePolicy(&c.Policy, &c.Agent)     // policy.go
	d.validateAutomations(c)                  // automations.go
	d.validateMQTT(c)                         // mqtt.go
	d.validateMetrics(c.Metrics)              // metrics.go
	d.validateWeb(c.Web)                      // web.go
	d.validateBoards(c.Boards)                // boards.go
	d.validateUpdate(c.Update)                // update.go
	d.validateExec(&c.Exec)                   // exec.go
	d.validateSecrets(&c.Secrets)             // secrets.go
	d.validateMCP(c.MCP)                      // mcp.go
	d.validateNetwork(&c.Network)             // network.go
	d.validateSkills(&c.Skills)               // skills.go
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

// checkName validates a pin, port or bus name, at its key.
func (d *decoder) checkName(section, name, what string) {
	if !nameRE.MatchString(name) {
		d.add(d.keyAt(section+"."+name), "%s: invalid %s name %q: names are 1 to 32 lowercase letters, digits, _ and -, starting with a letter", section, what, name)
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
