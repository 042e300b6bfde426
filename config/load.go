package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// systemConfig is the last place Find looks; a variable so that tests
// can point it into a temporary directory.
var systemConfig = "/etc/clawedge/config.yaml"

// Find returns the configuration file clawedge should use: the first that
// exists of ./clawedge.yaml (a project or a test run), the user's
// $XDG_CONFIG_HOME/clawedge/config.yaml (~/.config when XDG_CONFIG_HOME is
// unset), and /etc/clawedge/config.yaml (the SD image and the .deb). It
// returns "" and nil when none exists: clawedge then runs on Default().
func Find() (string, error) {
	candidates := []string{"clawedge.yaml"}
	// The XDG spec says to ignore a relative XDG_CONFIG_HOME.
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" && filepath.IsAbs(x) {
		candidates = append(candidates, filepath.Join(x, "clawedge", "config.yaml"))
	} else if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "clawedge", "config.yaml"))
	}
	candidates = append(candidates, systemConfig)
	for _, p := range candidates {
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			return "", fmt.Errorf("config: %s is a directory, not a config file", p)
		case err == nil:
			return p, nil
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			continue
		default:
			// A file that exists but cannot be read must not be
			// skipped silently in favour of the next one: the user
			// would wonder why their settings are ignored.
			return "", fmt.Errorf("config: %w", err)
		}
	}
	return "", nil
}

// maxFileSize bounds what Parse accepts and Load reads: a configuration
// is a few kilobytes, and a board with 512 MB must not be taken down by a
// wrong path or a hostile file. The YAML parser takes about 100 bytes of
// memory for each byte of a long scalar, so the bound is also what keeps
// any accepted file under about 30 MB.
const maxFileSize = 256 << 10

// Load reads and parses the file at path, expanding ${VAR} from the
// process environment.
func Load(path string) (*Config, error) { return LoadWithSecrets(path, nil) }

// LoadWithSecrets is Load with ${secret:NAME} resolved by secrets (see
// secretref.go).
func LoadWithSecrets(path string, secrets SecretLookup) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	return ParseWithSecrets(data, path, os.LookupEnv, secrets) // which refuses more than maxFileSize
}

// Parse parses a configuration file's contents. filename is used in
// error messages and as Config.Source. getenv resolves ${VAR} references
// (os.LookupEnv in production, a map in tests); nil means no variable is
// set. Every problem in the file is reported, as an *Error.
func Parse(data []byte, filename string, getenv func(string) (string, bool)) (cfg *Config, err error) {
	return ParseWithSecrets(data, filename, getenv, nil)
}

// ParseWithSecrets is Parse with ${secret:NAME} resolved by secrets; nil
// makes every such reference an error.
func ParseWithSecrets(data []byte, filename string, getenv func(string) (string, bool), secrets SecretLookup) (cfg *Config, err error) {
	if getenv == nil {
		getenv = func(string) (string, bool) { return "", false }
	}
	// Editors on Windows start UTF-8 files with a byte order mark,
	// which the YAML library would take as part of the first key.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	d := &decoder{
		problems: problems{file: filename},
		getenv:   getenv,
		secretFn: secrets,
		locs:     map[string]loc{},
		failed:   map[string]bool{},
		anchors:  map[string][]*ast.AnchorNode{},

		secretVars: map[string]varUse{},
	}
	// A panic in the YAML library (or in the checks before it) on a
	// malformed file must not take the agent down with a stack trace;
	// it becomes one more problem.
	defer func() {
		if r := recover(); r != nil {
			d.add(pos{1, 1}, "the YAML parser failed on this file (%v)", r)
			cfg, err = nil, d.err(d.secrets)
		}
	}()
	if !prescan(data, &d.problems) {
		return nil, d.err(nil)
	}
	src := prepare(data)
	d.src = src

	file, perr := parser.ParseBytes([]byte(src.text), 0)
	if perr != nil {
		d.syntaxError(perr)
		return nil, d.err(nil)
	}

	cfg = Default()
	cfg.Source = filename
	var body ast.Node
	for _, doc := range file.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			d.add(nodePos(doc.Body), "only one YAML document is allowed in a config file")
			break
		}
		body = doc.Body
	}
	if body != nil {
		ast.Walk(anchorCollector(d.anchors), body)
		d.config(body, cfg)
	}
	d.validate(cfg)
	if err := d.err(d.secrets); err != nil {
		return nil, err
	}
	return cfg, nil
}

// syntaxError turns the YAML library's error into a Problem. Its own
// message embeds a source excerpt; only the position and the short
// message are kept, since the excerpt could show a secret.
//
// The library's Error() is not called when the error has its parts: it
// builds the excerpt in time and memory quadratic in the file (205 MB
// for 20 KB of an unclosed "[a,a,..."; a 1 MiB file would never finish).
func (d *decoder) syntaxError(err error) {
	at := pos{1, 1}
	var msg string
	var ye interface {
		GetToken() *token.Token
		GetMessage() string
	}
	if errors.As(err, &ye) {
		msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			at = clampPos(tk.Position.Line, tk.Position.Column)
		}
	} else {
		msg, _, _ = strings.Cut(err.Error(), "\n")
	}
	d.add(at, "%s", d.src.restore(msg))
}

// anchorCollector records every anchor in document order, so that an
// alias can be resolved to the last anchor of its name defined before it.
type anchorCollector map[string][]*ast.AnchorNode

func (a anchorCollector) Visit(n ast.Node) ast.Visitor {
	if an, ok := n.(*ast.AnchorNode); ok && an.Name != nil {
		name := an.Name.GetToken().Value
		a[name] = append(a[name], an)
	}
	return a
}

// ${VAR} expansion.
//
// References are expanded inside scalar values, after parsing, so that a
// value from the environment can never change the document's structure
// (a token containing ": " or "\n" stays one string). But YAML itself
// does not allow "{" and "}" inside a plain scalar of a flow mapping, and
// the README's example writes {..., api_key: ${ANTHROPIC_API_KEY}, ...}.
// So before parsing, prepare replaces each ${...} with a placeholder of
// the same length in characters (keeping every column the parser
// reports) made of a marker character that the file cannot contain and
// plain-scalar-safe characters; after parsing, each scalar value's
// placeholders are expanded from the recorded references.

// ref is one ${...} reference found before parsing.
type ref struct {
	raw string // as written, "${NAME:-default}"
	at  pos    // where its "$" is
}

// source is a file's text with its ${...} references replaced.
type source struct {
	text   string
	marker rune
	refs   []ref
}

// refDigits is how many base-36 digits a placeholder uses for its
// reference index after the marker; with the marker, it is also the
// shortest reference, "${X}".
const (
	refDigits = 3
	maxRefs   = 36 * 36 * 36
	digits36  = "0123456789abcdefghijklmnopqrstuvwxyz"
)

// prepare finds the ${...} references of data and replaces them with
// placeholders. A reference is replaced only when it closes on the same
// line and holds no character that could be YAML syntax the reference
// was not meant to hide (quotes, backslashes, braces, " #" comments); the
// rest are left for expansion after parsing, where they are still found
// inside values, just reported at the value's position.
func prepare(data []byte) *source {
	rs := []rune(string(data))
	src := &source{marker: chooseMarker(rs)}
	if src.marker == 0 {
		src.text = string(rs)
		return src
	}
	line, col := 1, 1
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\n' || (r == '\r' && (i+1 == len(rs) || rs[i+1] != '\n')):
			line, col = line+1, 1
			continue
		case r == '$' && i+1 < len(rs) && rs[i+1] == '$':
			// "$$" is a literal "$"; skipping both keeps "$${X}"
			// from being taken for a reference.
			i++
			col += 2
			continue
		case r == '$' && i+1 < len(rs) && rs[i+1] == '{' && len(src.refs) < maxRefs:
			end := refEnd(rs, i+2)
			if end < 0 {
				break
			}
			n := end + 1 - i
			src.refs = append(src.refs, ref{raw: string(rs[i : end+1]), at: pos{line, col}})
			ph := placeholder(src.marker, len(src.refs)-1, n)
			copy(rs[i:], ph)
			i = end
			col += n
			continue
		}
		col++
	}
	src.text = string(rs)
	return src
}

// refEnd returns the index of the "}" closing a reference whose body
// starts at i, or a negative number when the reference is not one
// prepare may replace. A default may hold references of its own
// ("${A:-${B}}") and "$$".
func refEnd(rs []rune, i int) int {
	return matchRef(rs, i, true)
}

// maxRefDepth is how deep references may nest in defaults
// ("${A:-${B:-${C}}}" is three). The bound also keeps matching linear:
// a line of a million unclosed "${A:-" would otherwise be scanned to its
// end from each of them.
const maxRefDepth = 4

// refTooDeep is what matchRef returns for references nested deeper than
// maxRefDepth.
const refTooDeep = -2

// matchRef returns the index of the "}" that closes the reference whose
// body starts at i (after its "${"), counting the references nested in
// its default; -1 when it is not closed, refTooDeep when they nest
// deeper than maxRefDepth. strict also gives up, for
// prepare, at anything that could be YAML syntax the reference was not
// meant to hide (a line break, quotes, a backslash, a "{" not opening a
// reference, " #"), and at an empty reference.
func matchRef(rs []rune, i int, strict bool) int {
	depth := 1
	for j := i; j < len(rs); j++ {
		switch rs[j] {
		case '}':
			if strict && rs[j-1] == '{' {
				return -1 // "${}": reported after parsing
			}
			if depth--; depth == 0 {
				return j
			}
		case '$':
			if j+1 < len(rs) && (rs[j+1] == '$' || rs[j+1] == '{') {
				if rs[j+1] == '{' {
					if depth++; depth > maxRefDepth {
						return refTooDeep
					}
				}
				j++
			}
		case '\n', '\r', '"', '\'', '\\', '{':
			if strict {
				return -1
			}
		case '#':
			if strict && (rs[j-1] == ' ' || rs[j-1] == '\t') {
				return -1
			}
		}
	}
	return -1
}

// placeholder returns n runes: the marker, the reference index in base
// 36, and padding.
func placeholder(marker rune, idx, n int) []rune {
	ph := make([]rune, n)
	ph[0] = marker
	for k := refDigits; k >= 1; k-- {
		ph[k] = rune(digits36[idx%36])
		idx /= 36
	}
	for k := refDigits + 1; k < n; k++ {
		ph[k] = '_'
	}
	return ph
}

// chooseMarker returns a private-use character that neither appears in
// the file nor can be written in it as a \x, \u or \U escape inside a
// double-quoted string, so that a marker in a parsed value can only come
// from prepare. Zero means every candidate is taken (a pathological
// file); references are then all expanded after parsing.
func chooseMarker(rs []rune) rune {
	used := map[rune]bool{}
	for i, r := range rs {
		used[r] = true
		if r != '\\' || i+1 >= len(rs) {
			continue
		}
		n := map[rune]int{'x': 2, 'u': 4, 'U': 8}[rs[i+1]]
		if n == 0 || i+2+n > len(rs) {
			continue
		}
		var v rune
		ok := true
		for _, h := range rs[i+2 : i+2+n] {
			d := strings.IndexRune("0123456789abcdef", toLower(h))
			if d < 0 {
				ok = false
				break
			}
			v = v<<4 | rune(d)
		}
		if ok {
			used[v] = true
		}
	}
	for _, block := range [][2]rune{{0xE000, 0xF8FF}, {0xF0000, 0xFFFFD}, {0x100000, 0x10FFFD}} {
		for r := block[0]; r <= block[1]; r++ {
			if !used[r] {
				return r
			}
		}
	}
	return 0
}

func toLower(r rune) rune {
	if 'A' <= r && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// placeholderAt returns the reference whose placeholder starts at rs[i].
func (s *source) placeholderAt(rs []rune, i int) (ref, bool) {
	if s.marker == 0 || rs[i] != s.marker || i+refDigits >= len(rs) {
		return ref{}, false
	}
	idx := 0
	for _, r := range rs[i+1 : i+1+refDigits] {
		d := strings.IndexRune(digits36, r)
		if d < 0 {
			return ref{}, false
		}
		idx = idx*36 + d
	}
	if idx >= len(s.refs) {
		return ref{}, false
	}
	return s.refs[idx], true
}

// restore puts the references back into text taken from the parsed file
// (keys, messages of the YAML library), for showing it as it was written.
func (s *source) restore(text string) string {
	if s.marker == 0 || !strings.ContainsRune(text, s.marker) {
		return text
	}
	rs := []rune(text)
	var b strings.Builder
	for i := 0; i < len(rs); {
		if r, ok := s.placeholderAt(rs, i); ok {
			b.WriteString(r.raw)
			i += len([]rune(r.raw))
			continue
		}
		b.WriteRune(rs[i])
		i++
	}
	return b.String()
}

// expanded is a scalar value after ${VAR} expansion.
type expanded struct {
	value string // with references expanded and "$$" turned into "$"
	raw   string // as written, references unexpanded: the only form messages show
	refs  bool   // whether it held a reference
}

// expand expands the references in a scalar value found at `at`. path
// names the field in messages. Problems are reported and ok is false when
// a variable is unset or a reference is malformed.
func (d *decoder) expand(text string, at pos, path string) (e expanded, ok bool) {
	if !strings.ContainsRune(text, '$') && (d.src.marker == 0 || !strings.ContainsRune(text, d.src.marker)) {
		return expanded{value: text, raw: text}, true
	}
	rs := []rune(text)
	var val, raw strings.Builder
	ok = true
	for i := 0; i < len(rs); {
		if r, isRef := d.src.placeholderAt(rs, i); isRef {
			raw.WriteString(r.raw)
			v, good := d.lookup(r.raw, r.at, path, 1)
			ok = ok && good
			val.WriteString(v)
			e.refs = true
			i += len([]rune(r.raw))
			if ok && i < len(rs) && rs[i] == '}' {
				n := len([]rune(r.raw))
				ok = d.strayBrace(r.raw, pos{r.at.line, r.at.col + n}, path)
			}
			continue
		}
		if rs[i] == '$' && i+1 < len(rs) && rs[i+1] == '$' {
			val.WriteByte('$')
			raw.WriteString("$$")
			i += 2
			continue
		}
		if rs[i] == '$' && i+1 < len(rs) && rs[i+1] == '{' {
			// A reference prepare left alone: multi-line, or made
			// by escapes in a quoted string, or malformed. The
			// references prepare did replace inside it (in its
			// default) are put back: lookup expands them.
			end := matchRef(rs, i+2, false)
			if end == refTooDeep {
				d.add(at, "%s: references nest deeper than %d in the defaults of %q", path, maxRefDepth, d.src.restore(text))
				d.fail(path)
				return expanded{raw: d.src.restore(text)}, false
			}
			if end < 0 {
				d.add(at, "%s: unterminated ${ in %q (write $$ for a literal $)", path, d.src.restore(text))
				d.fail(path)
				return expanded{raw: d.src.restore(text)}, false
			}
			s := d.src.restore(string(rs[i : end+1]))
			raw.WriteString(s)
			v, good := d.lookup(s, at, path, 1)
			ok = ok && good
			val.WriteString(v)
			e.refs = true
			i = end + 1
			if ok && i < len(rs) && rs[i] == '}' {
				ok = d.strayBrace(s, at, path)
			}
			continue
		}
		val.WriteRune(rs[i])
		raw.WriteRune(rs[i])
		i++
	}
	e.value, e.raw = val.String(), raw.String()
	if !ok {
		d.fail(path)
	}
	return e, ok
}

// lookup resolves one reference, "${NAME}" or "${NAME:-default}"; a
// default is expanded in turn, so it may hold "$$" and references. The
// messages name the variable, never a value.
func (d *decoder) lookup(r string, at pos, path string, level int) (string, bool) {
	if level > maxRefDepth {
		d.add(at, "%s: references nest deeper than %d in the defaults of %q", path, maxRefDepth, r)
		return "", false
	}
	body := r[2 : len(r)-1]
	if name, ok := strings.CutPrefix(body, "secret:"); ok {
		return d.secretRef(name, at, path) // secretref.go
	}
	name, def, hasDef := strings.Cut(body, ":-")
	if !validEnvName(name) {
		d.add(at, "%s: invalid reference %q: want ${NAME} or ${NAME:-default}, NAME made of letters, digits and _ (write $$ for a literal $)", path, r)
		return "", false
	}
	if d.inSecret != "" {
		if _, seen := d.secretVars[name]; !seen {
			d.secretVars[name] = varUse{path: d.inSecret, at: at}
		}
	}
	v, set := d.getenv(name)
	if hasDef && v == "" {
		return d.expandDefault(def, at, path, level)
	}
	if !set {
		d.add(at, "%s: environment variable %s is not set (write ${%s:-default} to give a default)", path, name, name)
		return "", false
	}
	return v, true
}

// expandDefault expands a reference's default: "$$" is a "$", and each
// reference in it is looked up (and its own default expanded).
func (d *decoder) expandDefault(def string, at pos, path string, level int) (string, bool) {
	if !strings.Contains(def, "$") {
		return def, true
	}
	rs := []rune(def)
	var b strings.Builder
	ok := true
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '$' && i+1 < len(rs) && rs[i+1] == '$':
			b.WriteByte('$')
			i++
		case rs[i] == '$' && i+1 < len(rs) && rs[i+1] == '{':
			// The enclosing reference was matched with its nested
			// ones, so this one is closed.
			end := matchRef(rs, i+2, false)
			if end < 0 {
				d.add(at, "%s: unterminated ${ in a default", path)
				return "", false
			}
			v, good := d.lookup(string(rs[i:end+1]), at, path, level+1)
			ok = ok && good
			b.WriteString(v)
			i = end
		default:
			b.WriteRune(rs[i])
		}
	}
	return b.String(), ok
}

// strayBrace reports a "}" right after a reference ("${HOME:-x}}"): a
// brace too many, or a default that was meant to hold one, which no
// reference can.
func (d *decoder) strayBrace(r string, at pos, path string) bool {
	d.add(at, "%s: a stray } follows %s (a reference ends at the } matching its ${; a default cannot hold a })", path, r)
	return false
}

// validEnvName reports whether s is a portable environment variable
// name: [A-Za-z_][A-Za-z0-9_]*.
func validEnvName(s string) bool {
	if s == "" || ('0' <= s[0] && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}
