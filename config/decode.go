package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// The file is decoded by walking the YAML syntax tree rather than by
// unmarshalling into the structs: the walk knows the position of every
// key and value, so each problem — including the semantic ones found
// later by validate — names the exact line and column, and it can tell
// "key absent" from "key present", which the defaults rules depend on.

// The valid keys at each level, in the order the messages list them.
var (
	topKeys = []string{"data_dir", "env", "board", "console", "telegram", "models", "policy", "agent",
		"timezone", "location", "automation_budget", "automations", "mqtt", "metrics", "web", "exec", "secrets", "mcp", "update", "network", "store", "memory", "skills", "goals", "boards"}
)

// loc is where a path ("board.pins.led.gpio", "models.remote[0]") was
// found in the file.
type loc struct {
	at  pos    // the value
	key pos    // the key that introduced it (the value's own position for list items)
	raw string // a scalar value as written, references unexpanded
}

type decoder struct {
	problems
	src    *source
	getenv func(string) (string, bool)
	// secretFn resolves ${secret:NAME}; nil: there is no secret store.
	secretFn SecretLookup
	anchors  map[string][]*ast.AnchorNode
	locs     map[string]loc
	// failed marks paths whose value could not be decoded, so that
	// validation does not pile a second, misleading error on them.
	failed map[string]bool
	// secrets are the values of secret fields, scrubbed from messages.
	secrets []string
	// secretVars are the environment variables that feed a secret
	// field, with where: env must not list them. inSecret is the
	// secret field being expanded, for lookup to record its variables.
	secretVars map[string]varUse
	inSecret   string
	// via is set while decoding what an alias refers to: problems found
	// there are reported at the alias, where the value is being used,
	// not at the anchor, where it is fine.
	via *pos
}

// pos is where n is, or the alias it is being decoded through.
func (d *decoder) pos(n ast.Node) pos {
	if d.via != nil {
		return *d.via
	}
	return nodePos(n)
}

// enter starts decoding the container n; when n is an alias, positions
// inside it are reported at the alias until the returned func is called.
func (d *decoder) enter(n ast.Node) (leave func()) {
	if _, ok := n.(*ast.AliasNode); !ok || d.via != nil {
		return func() {}
	}
	at := nodePos(n)
	d.via = &at
	return func() { d.via = nil }
}

func (d *decoder) fail(path string) { d.failed[path] = true }

func clampPos(line, col int) pos {
	return pos{max(line, 1), max(col, 1)}
}

// nodePos is where a node starts. A block mapping's own token is its
// first ":", so its first key is used instead.
func nodePos(n ast.Node) pos {
	switch x := n.(type) {
	case nil:
		return pos{1, 1}
	case *ast.MappingNode:
		if !x.IsFlowStyle && len(x.Values) > 0 {
			return nodePos(x.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return nodePos(x.Key)
	}
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return pos{1, 1}
	}
	return clampPos(tk.Position.Line, tk.Position.Column)
}

// resolve follows anchors and aliases to the node holding the value.
// It returns nil after reporting a problem (unknown alias, tag).
func (d *decoder) resolve(n ast.Node, path string) ast.Node {
	for depth := 0; n != nil; depth++ {
		if depth > 100 {
			d.add(d.pos(n), "%s: aliases nest too deep", path)
			return nil
		}
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.AliasNode:
			target := d.alias(x)
			if target == nil {
				name := ""
				if x.Value != nil {
					name = x.Value.GetToken().Value
				}
				d.add(d.pos(x), "%s: alias *%s refers to no anchor defined before it", path, d.src.restore(name))
				d.fail(path)
				return nil
			}
			n = target
		case *ast.TagNode:
			// Tags would let a file override the schema's types
			// (!!str 17); the schema decides, so they are refused.
			d.add(d.pos(x), "%s: YAML tags (%s) are not supported; quote the value instead", path, d.src.restore(x.Start.Value))
			d.fail(path)
			return nil
		case *ast.CommentGroupNode, *ast.CommentNode:
			return nil
		default:
			return n
		}
	}
	return nil
}

// alias returns the value of the last anchor with the alias's name
// defined before the alias.
func (d *decoder) alias(a *ast.AliasNode) ast.Node {
	if a.Value == nil {
		return nil
	}
	at := nodePos(a)
	var found ast.Node
	for _, an := range d.anchors[a.Value.GetToken().Value] {
		p := nodePos(an)
		if p.line < at.line || p.line == at.line && p.col < at.col {
			found = an.Value
		}
	}
	return found
}

func isNull(n ast.Node) bool {
	_, ok := n.(*ast.NullNode)
	return n == nil || ok
}

// describe names what was found, for "expected X, found Y" messages. The
// value of a secret field is never shown.
func (d *decoder) describe(n ast.Node, secret bool) string {
	switch x := n.(type) {
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "nothing"
	case *ast.LiteralNode:
		if secret {
			return "a block of text"
		}
		return strconv.Quote(d.src.restore(x.Value.Value))
	case *ast.StringNode:
		if secret {
			return "a string"
		}
		return strconv.Quote(d.src.restore(x.Value))
	}
	if secret {
		return "a " + strings.ToLower(n.Type().String())
	}
	return strconv.Quote(d.src.restore(n.GetToken().Value))
}

// fields decodes a mapping with fixed keys. A null value counts as an
// absent key, so "telegram:" with nothing under it keeps the defaults.
func (d *decoder) fields(n ast.Node, path string, keys []string, set func(key string, v ast.Node)) {
	at := d.pos(n)
	defer d.enter(n)()
	if n = d.resolve(n, path); isNull(n) {
		return
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.add(at, "%s: expected a mapping with keys %s, found %s", name(path), strings.Join(keys, ", "), d.describe(n, false))
		d.fail(path)
		return
	}
	seen := map[string]bool{}
	for _, mv := range m.Values {
		k, kat, good := d.key(mv, path)
		if !good {
			continue
		}
		if !slices.Contains(keys, k) {
			where := "in " + path
			if path == "" {
				where = "at the top level"
			}
			d.add(kat, "unknown key %q %s (valid: %s)", k, where, strings.Join(keys, ", "))
			continue
		}
		if seen[k] {
			d.add(kat, "%s: key %q appears twice", name(path), k)
			continue
		}
		seen[k] = true
		child := join(path, k)
		if !isNull(mv.Value) {
			d.locs[child] = loc{at: d.pos(mv.Value), key: kat}
		}
		set(k, mv.Value)
	}
}

// entries decodes a mapping of names to values (pins, ports, buses). It
// returns false when the value was null (the key counts as absent).
func (d *decoder) entries(n ast.Node, path string, each func(name string, v ast.Node)) bool {
	at := d.pos(n)
	defer d.enter(n)()
	if n = d.resolve(n, path); isNull(n) {
		return false
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.add(at, "%s: expected a mapping of names, found %s", path, d.describe(n, false))
		d.fail(path)
		return false
	}
	seen := map[string]bool{}
	for _, mv := range m.Values {
		k, kat, good := d.key(mv, path)
		if !good {
			continue
		}
		if seen[k] {
			d.add(kat, "%s: %q is defined twice", path, k)
			continue
		}
		seen[k] = true
		child := join(path, k)
		d.locs[child] = loc{at: d.pos(mv.Value), key: kat, raw: k}
		each(k, mv.Value)
	}
	return true
}

// key returns a mapping entry's key as written.
func (d *decoder) key(mv *ast.MappingValueNode, path string) (string, pos, bool) {
	kat := d.pos(mv.Key)
	var k ast.Node = mv.Key
	if mk, ok := k.(*ast.MappingKeyNode); ok {
		k = mk.Value
	}
	switch x := k.(type) {
	case *ast.MergeKeyNode:
		d.add(kat, "%s: merge keys (<<) are not supported; write the keys out", name(path))
		return "", kat, false
	case *ast.StringNode:
		return d.src.restore(x.Value), kat, true
	case ast.ScalarNode:
		if tk := x.GetToken(); tk != nil {
			return d.src.restore(tk.Value), kat, true
		}
	}
	d.add(kat, "%s: keys must be plain names", name(path))
	return "", kat, false
}

// items decodes a list. It returns false when the value was null.
func (d *decoder) items(n ast.Node, path string, each func(i int, v ast.Node)) bool {
	at := d.pos(n)
	defer d.enter(n)()
	if n = d.resolve(n, path); isNull(n) {
		return false
	}
	s, ok := n.(*ast.SequenceNode)
	if !ok {
		d.add(at, "%s: expected a list, found %s", path, d.describe(n, false))
		d.fail(path)
		return false
	}
	for i, v := range s.Values {
		child := fmt.Sprintf("%s[%d]", path, i)
		d.locs[child] = loc{at: d.pos(v), key: d.pos(v)}
		if _, null := d.resolveQuiet(v).(*ast.NullNode); null || v == nil {
			// "- " with nothing after it is almost always an
			// editing slip; a null entry means nothing useful.
			// It is reported at the "-", since the null has no text.
			at := d.pos(v)
			if d.via == nil && len(s.Entries) == len(s.Values) && s.Entries[i] != nil && s.Entries[i].Start != nil {
				at = nodePos(s.Entries[i])
			}
			d.add(at, "%s: empty list item", child)
			d.fail(child)
		}
		// Called even for a bad item, so that list indexes in the
		// Config match the file's for validation's positions.
		each(i, v)
	}
	return true
}

// scalar is a scalar value ready to be typed by the field that holds it.
type scalar struct {
	node ast.Node // the resolved node
	at   pos      // where it is used (the alias, not the anchor)
	text string   // expanded text (strings) or the token text (other types)
	raw  string   // as written, for messages
	// refs is true when the value held a ${...} reference. Its expanded
	// text is then read according to the field's type ("17" from the
	// environment is a fine gpio), where a quoted "17" in the file is
	// not: the file's own YAML types are respected.
	refs bool
}

// scalar returns the scalar at n, or ok=false after reporting why not
// (or silently for null, which means "not set").
func (d *decoder) scalar(n ast.Node, path, want string, secret bool) (s scalar, ok bool) {
	s.at = d.pos(n)
	n = d.resolve(n, path)
	if isNull(n) {
		delete(d.locs, path)
		return s, false
	}
	s.node = n
	var text string
	switch x := n.(type) {
	case *ast.MappingNode, *ast.SequenceNode:
		d.add(s.at, "%s: expected %s, found %s", path, want, d.describe(n, secret))
		d.fail(path)
		return s, false
	case *ast.StringNode:
		text = x.Value
	case *ast.LiteralNode:
		text = x.Value.Value
	default:
		tk := n.GetToken()
		if tk == nil {
			d.add(s.at, "%s: expected %s", path, want)
			d.fail(path)
			return s, false
		}
		text = tk.Value
	}
	if secret {
		d.inSecret = path
	}
	e, good := d.expand(text, s.at, path)
	d.inSecret = ""
	if !good {
		return s, false
	}
	s.text, s.raw, s.refs = e.value, e.raw, e.refs
	if secret {
		d.secrets = append(d.secrets, s.text)
	}
	// These are refused here, for every field, rather than where the
	// value is used, so that `config check` refuses what `run` would.
	switch {
	case strings.ContainsRune(s.text, 0):
		// No path, name or key can hold one; the kernel and HTTP
		// refuse it, far from the file.
		d.add(s.at, "%s: holds a NUL character (\\0), which no setting can use", path)
		d.fail(path)
		return s, false
	case secret && strings.ContainsFunc(s.text, isControl):
		// A secret goes into an HTTP header or a URL.
		d.add(s.at, "%s: holds a control character (a stray newline or tab?); secrets are sent as they are", path)
		d.fail(path)
		return s, false
	}
	if l, ok := d.locs[path]; ok {
		l.raw = s.raw
		l.at = s.at
		d.locs[path] = l
	} else {
		d.locs[path] = loc{at: s.at, key: s.at, raw: s.raw}
	}
	return s, true
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// typeError reports a value of the wrong type.
func (d *decoder) typeError(s scalar, path, want string, secret bool) {
	found := d.describe(s.node, secret)
	if s.refs && !secret {
		found = strconv.Quote(s.raw)
	}
	d.add(s.at, "%s: expected %s, found %s", path, want, found)
	d.fail(path)
}

// str decodes a string field. Any scalar is accepted as its text, so
// that "model: 7" or "name: 2024" need no quotes.
func (d *decoder) str(n ast.Node, path string, dst *string) {
	if s, ok := d.scalar(n, path, "a string", false); ok {
		*dst = s.text
	}
}

func (d *decoder) secret(n ast.Node, path string, dst *Secret) {
	if s, ok := d.scalar(n, path, "a string", true); ok {
		*dst = Secret(s.text)
	}
}

// integer decodes an integer field that must fit in [lo, hi] to be
// represented at all (int is 32 bits on armv6 and armv7).
func (d *decoder) integer(n ast.Node, path string, lo, hi int64) (int64, bool) {
	const want = "an integer"
	s, ok := d.scalar(n, path, want, false)
	if !ok {
		return 0, false
	}
	var v int64
	var err error
	switch x := s.node.(type) {
	case *ast.IntegerNode:
		switch iv := x.Value.(type) {
		case int64:
			v = iv
		case uint64:
			if iv > math.MaxInt64 {
				err = strconv.ErrRange
			}
			v = int64(iv)
		default:
			err = strconv.ErrSyntax
		}
	case *ast.StringNode:
		if !s.refs && x.Token != nil && x.Token.Type != token.StringType {
			// Quoted in the file: YAML says it is a string.
			d.typeError(s, path, want, false)
			return 0, false
		}
		v, err = strconv.ParseInt(strings.TrimPrefix(s.text, "+"), 0, 64)
		if err != nil && !s.refs && !looksNumeric(s.text) {
			err = strconv.ErrSyntax
		}
	default:
		err = strconv.ErrSyntax
	}
	if err == nil && leadingZero(s.text) {
		// YAML 1.1 reads 017 as octal 15, YAML 1.2 as 17: on a gpio
		// either reading could be the wrong pin, so neither is taken.
		d.add(s.at, "%s: %s is ambiguous (octal or decimal?); write it without the leading zero, or as 0o%s for octal", path, strconv.Quote(s.raw), strings.TrimLeft(s.text, "+-0"))
		d.fail(path)
		return 0, false
	}
	if err == nil && (v < lo || v > hi) {
		err = strconv.ErrRange
	}
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok {
			err = ne.Err
		}
		if err == strconv.ErrRange {
			d.add(s.at, "%s: %s is out of range", path, strconv.Quote(s.raw))
			d.fail(path)
			return 0, false
		}
		d.typeError(s, path, want, false)
		return 0, false
	}
	return v, true
}

// leadingZero reports a decimal-looking integer with a leading zero.
func leadingZero(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return len(s) > 1 && s[0] == '0' && '0' <= s[1] && s[1] <= '9'
}

func looksNumeric(s string) bool {
	return s != "" && strings.Trim(s, "0123456789+-_") == ""
}

// intField decodes into an int.
func (d *decoder) intField(n ast.Node, path string, dst *int) {
	d.intIn(n, path, dst, math.MinInt, math.MaxInt)
}

// intIn decodes into an int that must lie in [lo, hi]; out of it, dst keeps
// its value and the error says where and what the bounds are.
func (d *decoder) intIn(n ast.Node, path string, dst *int, lo, hi int64) {
	if v, ok := d.integer(n, path, lo, hi); ok {
		*dst = int(v)
	}
}

// boolean decodes true or false. YAML 1.1's yes/no/on/off are refused
// rather than guessed at: "pairing: no" should not mean "no" by accident
// of the parser's YAML version.
// int64s decodes a list of integers (Telegram ids) into dst; dst keeps its
// value when the list is not one.
func (d *decoder) int64s(n ast.Node, path string, dst *[]int64) {
	var ids []int64
	if d.items(n, path, func(i int, v ast.Node) {
		id, _ := d.integer(v, fmt.Sprintf("%s[%d]", path, i), math.MinInt64, math.MaxInt64)
		ids = append(ids, id)
	}) {
		*dst = ids
	}
}

func (d *decoder) boolean(n ast.Node, path string, dst *bool) {
	const want = "true or false"
	s, ok := d.scalar(n, path, want, false)
	if !ok {
		return
	}
	if b, ok := s.node.(*ast.BoolNode); ok && !s.refs {
		*dst = b.Value
		return
	}
	if s.refs {
		switch s.text {
		case "true", "True", "TRUE":
			*dst = true
			return
		case "false", "False", "FALSE":
			*dst = false
			return
		}
	}
	d.typeError(s, path, want, false)
}

// duration decodes "10m", "1h30m", "500ms", and whole days ("7d", "90d"),
// which time.ParseDuration does not read.
func (d *decoder) duration(n ast.Node, path string, dst *Duration) {
	d.durationAs(n, path, dst, "a duration such as 10m, 1h30m or 500ms")
}

// durationAs is duration, with want the examples an error gives (days for
// settings counted in days).
func (d *decoder) durationAs(n ast.Node, path string, dst *Duration, want string) {
	s, ok := d.scalar(n, path, want, false)
	if !ok {
		return
	}
	if _, isStr := s.node.(*ast.StringNode); !isStr && !s.refs {
		d.typeError(s, path, want, false)
		return
	}
	if n, ok := strings.CutSuffix(s.text, "d"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 || v > 100*365 {
			d.typeError(s, path, want, false)
			return
		}
		*dst = Duration(time.Duration(v) * 24 * time.Hour)
		return
	}
	v, err := time.ParseDuration(s.text)
	if err != nil {
		d.typeError(s, path, want, false)
		return
	}
	*dst = Duration(v)
}

// number decodes a decimal number ("8", "7.5", "0.003"). Infinities and
// NaN are refused: no setting means them.
func (d *decoder) number(n ast.Node, path string, dst *float64) {
	const want = "a number"
	s, ok := d.scalar(n, path, want, false)
	if !ok {
		return
	}
	var v float64
	var err error
	switch x := s.node.(type) {
	case *ast.IntegerNode:
		switch iv := x.Value.(type) {
		case int64:
			v = float64(iv)
		case uint64:
			v = float64(iv)
		default:
			err = strconv.ErrSyntax
		}
	case *ast.FloatNode:
		v = x.Value
	case *ast.StringNode:
		if !s.refs {
			// Quoted in the file: YAML says it is a string.
			d.typeError(s, path, want, false)
			return
		}
		v, err = strconv.ParseFloat(s.text, 64)
	default:
		err = strconv.ErrSyntax
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		d.typeError(s, path, want, false)
		return
	}
	*dst = v
}

// config decodes the top level over the defaults in c.
func (d *decoder) config(root ast.Node, c *Config) {
	d.fields(root, "", topKeys, func(k string, v ast.Node) {
		switch k {
		case "data_dir":
			d.str(v, "data_dir", &c.DataDir)
		case "env":
			var env []string
			if d.items(v, "env", func(i int, v ast.Node) {
				var s string
				d.str(v, fmt.Sprintf("env[%d]", i), &s)
				env = append(env, s)
			}) {
				c.Env = env
			}
		case "board":
			d.board(v, &c.Board) // board.go
		case "console":
			d.console(v, &c.Console) // console.go
		case "telegram":
			d.telegram(v, &c.Telegram) // telegram.go
		case "models":
			d.models(v, &c.Models) // models.go
		case "policy":
			d.policy(v, &c.Policy) // policy.go
		case "agent":
			d.agent(v, &c.Agent)
		case "timezone": // automations.go
			d.str(v, "timezone", &c.Timezone)
		case "location":
			d.location(v, &c.Location)
		case "automation_budget":
			d.automationBudget(v, &c.AutomationBudget)
		case "automations":
			d.automations(v, &c.Automations)
		case "mqtt": // mqtt.go
			d.mqtt(v, &c.MQTT)
		case "metrics": // metrics.go
			d.metrics(v, &c.Metrics)
		case "web": // web.go
			d.web(v, &c.Web)
		case "boards": // boards.go
			d.boards(v, &c.Boards)
		case "store": // store.go
			d.store(v, &c.Store)
		case "exec": // exec.go
			d.exec(v, &c.Exec)
		case "secrets": // secrets.go
			d.secretsSection(v, &c.Secrets)
		case "mcp": // mcp.go
			d.mcp(v, &c.MCP)
		case "update": // update.go
			d.update(v, &c.Update)
		case "network": // network.go
			d.network(v, &c.Network)
		case "memory": // memory.go
			d.memory(v, &c.Memory)
		case "skills": // skills.go
			d.skills(v, &c.Skills)
		case "goals": // goals.go
			d.goals(v, &c.Goals)
		}
	})
}

func nilIfEmpty[V any](m map[string]V) map[string]V {
	if len(m) == 0 {
		return nil
	}
	return m
}

// resolveQuiet follows anchors and aliases without reporting anything;
// the decoding that follows reports.
func (d *decoder) resolveQuiet(n ast.Node) ast.Node {
	for depth := 0; n != nil && depth <= 100; depth++ {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.AliasNode:
			n = d.alias(x)
		case *ast.CommentGroupNode, *ast.CommentNode:
			return nil
		default:
			return n
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// name is a path for messages; the top level has none.
func name(path string) string {
	if path == "" {
		return "config"
	}
	return path
}
