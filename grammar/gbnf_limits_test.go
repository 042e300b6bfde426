package grammar

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// llamaRepLimit is llama.cpp's MAX_REPETITION_THRESHOLD (src/llama-grammar.cpp):
// a repetition is refused when the rules its item stands for times its count
// reach it, and older builds refuse any count above it.
const llamaRepLimit = 2000

// checkLlamaLimits reads a GBNF grammar the way llama.cpp's parser counts it
// (our own reading of its documented rule, not its code): in a sequence, the
// item before a repetition stands for one rule (a literal, a class, a rule
// reference), for as many rules as its parenthesized group created, or, after
// a repetition, for that many times the count; X{m,n} creates n-m rules, X*
// and X+ one. It returns the first repetition llama.cpp would refuse, and the
// number of rules the grammar expands to.
func checkLlamaLimits(g string) (rules int, err error) {
	for _, line := range strings.Split(strings.TrimSpace(g), "\n") {
		name, body, ok := strings.Cut(line, " ::= ")
		if !ok {
			return 0, fmt.Errorf("not a rule: %q", line)
		}
		p := &limitParser{s: body}
		if err := p.alternates(); err != nil {
			return 0, fmt.Errorf("rule %s: %v", name, err)
		}
		if p.i != len(p.s) {
			return 0, fmt.Errorf("rule %s: unexpected %q", name, p.s[p.i:])
		}
		rules += 1 + p.created
	}
	return rules, nil
}

type limitParser struct {
	s       string
	i       int
	created int // symbols created so far (groups, repetition rules)
}

func (p *limitParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *limitParser) alternates() error {
	for {
		if err := p.sequence(); err != nil {
			return err
		}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '|' {
			p.i++
			continue
		}
		return nil
	}
}

func (p *limitParser) sequence() error {
	prev := 0 // rules the last item stands for; 0: no item yet
	for {
		p.space()
		if p.i >= len(p.s) {
			return nil
		}
		switch c := p.s[p.i]; {
		case c == '"':
			j := p.i + 1
			for j < len(p.s) && p.s[j] != '"' {
				if p.s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(p.s) {
				return fmt.Errorf("unterminated literal")
			}
			p.i, prev = j+1, 1
		case c == '[':
			j := p.i + 1
			for j < len(p.s) && p.s[j] != ']' {
				if p.s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(p.s) {
				return fmt.Errorf("unterminated class")
			}
			p.i, prev = j+1, 1
		case c == '(':
			p.i++
			before := p.created
			p.created++ // the group's own rule
			if err := p.alternates(); err != nil {
				return err
			}
			if p.i >= len(p.s) || p.s[p.i] != ')' {
				return fmt.Errorf("unclosed group")
			}
			p.i++
			prev = p.created - before
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-':
			for p.i < len(p.s) && (p.s[p.i] >= 'a' && p.s[p.i] <= 'z' || p.s[p.i] >= 'A' && p.s[p.i] <= 'Z' || p.s[p.i] >= '0' && p.s[p.i] <= '9' || p.s[p.i] == '-') {
				p.i++
			}
			prev = 1
		case c == '*' || c == '+' || c == '?' || c == '{':
			if prev == 0 {
				return fmt.Errorf("repetition of nothing")
			}
			lo, hi := 0, -1
			switch c {
			case '+':
				lo = 1
			case '?':
				hi = 1
			case '{':
				j := strings.IndexByte(p.s[p.i:], '}')
				if j < 0 {
					return fmt.Errorf("unclosed {")
				}
				spec := p.s[p.i+1 : p.i+j]
				a, b, comma := strings.Cut(spec, ",")
				var err error
				if lo, err = strconv.Atoi(a); err != nil {
					return err
				}
				hi = lo
				if comma {
					hi = -1
					if b != "" {
						if hi, err = strconv.Atoi(b); err != nil {
							return err
						}
					}
				}
				p.i += j
			}
			p.i++
			if lo > llamaRepLimit || hi > llamaRepLimit {
				return fmt.Errorf("count %d..%d above %d", lo, hi, llamaRepLimit)
			}
			total := 1
			if hi > 0 {
				total = hi
			} else if lo > 0 {
				total = lo
			}
			if prev*total >= llamaRepLimit {
				return fmt.Errorf("%d rules repeated %d times: llama.cpp refuses it", prev, total)
			}
			if hi < 0 {
				p.created++
			} else {
				p.created += hi - lo
			}
			prev *= total
		default:
			return nil
		}
	}
}

// The checker refuses what llama-server refused (issue 26: a JSON string
// character, a group, repeated 1024 times) and accepts the rule-reference
// form of the same.
func TestLlamaLimitsChecker(t *testing.T) {
	for g, ok := range map[string]bool{
		"root ::= \"a\" ([ -!] | [^\\x00-\\x7F] | \"\\\\\" ([\"\\\\] | \"u00\" [0-1])){0,1024}": false,
		"root ::= \"a\" c{0,1024}\nc ::= [ -!] | \"\\\\\" ([\"\\\\] | \"u00\" [0-1])":           true,
		"root ::= c{0,2001}\nc ::= [a]":           false,
		"root ::= (c c){0,999}\nc ::= [a]":        true,
		"root ::= (c (c){0,9}){0,200}\nc ::= [a]": false,
	} {
		if _, err := checkLlamaLimits(g); (err == nil) != ok {
			t.Errorf("%q: %v, want accepted %v", g, err, ok)
		}
	}
}

// Every grammar clawedge writes stays within llama.cpp's limits, for every
// form and mode, for the test tool sets, and for strings and arrays of any
// bound (no bound is shrunk: the language is the automaton's, which
// TestGBNFAgreesWithMasks and the real llama-server test check).
func TestGBNFWithinLlamaLimits(t *testing.T) {
	files, _ := filepath.Glob("../tools/testdata/toolsets/*.json")
	if len(files) == 0 {
		t.Fatal("no tool sets")
	}
	sets := map[string][]ToolSpec{}
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tools []ToolSpec
		if err := json.Unmarshal(body, &tools); err != nil {
			t.Fatal(err)
		}
		sets[filepath.Base(f)] = tools
	}
	for _, n := range []int{1, 63, 64, 65, 512, 1024, 1999, 2000, 4096, 100000, 3000000} {
		sets[fmt.Sprintf("max_len %d", n)] = []ToolSpec{{Name: "t/s", Params: []ArgSpec{
			{Name: "s", Type: TypeString, Required: true, MaxLen: n},
			{Name: "a", Type: TypeArray, Items: &ArgSpec{Type: TypeString, MaxLen: n}, MinItems: min(n, 70), MaxItems: n},
		}}}
	}
	for name, tools := range sets {
		for _, form := range []Form{FormQwen, FormJSON, FormCommand} {
			for _, mode := range []Mode{ModeAny, ModeCalls} {
				for _, think := range []bool{false, true} {
					g, err := GBNF(Spec{Form: form, Mode: mode, Tools: tools, Think: think})
					if err != nil {
						continue // not expressible in this form: a compile error, tested elsewhere
					}
					if n, err := checkLlamaLimits(g); err != nil {
						t.Errorf("%s %s/%s think %v: %v", name, form, mode, think, err)
					} else if n > 20000 {
						t.Errorf("%s %s/%s: %d rules", name, form, mode, n)
					}
				}
			}
		}
	}
}

// lengths is the set of lengths (up to top) of the strings a grammar over the
// one literal "A" matches: over one letter, a language is its set of lengths.
func lengths(t *testing.T, g string, top int) map[int]bool {
	t.Helper()
	rules := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(g), "\n") {
		name, body, _ := strings.Cut(line, " ::= ")
		rules[name] = body
	}
	type set = map[int]bool
	sum := func(a, b set) set {
		out := set{}
		for x := range a {
			for y := range b {
				if x+y <= top {
					out[x+y] = true
				}
			}
		}
		return out
	}
	var alternates func(s string, i *int) set
	item := func(s string, i *int) set {
		switch c := s[*i]; {
		case c == '"':
			j := strings.IndexByte(s[*i+1:], '"')
			n := j
			*i += j + 2
			return set{n: true}
		case c == '(':
			*i++
			v := alternates(s, i)
			*i++ // ')'
			return v
		default:
			j := *i
			for *i < len(s) && (s[*i] >= 'a' && s[*i] <= 'z' || s[*i] >= '0' && s[*i] <= '9' || s[*i] == '-') {
				*i++
			}
			body := rules[s[j:*i]]
			k := 0
			return alternates(body, &k)
		}
	}
	alternates = func(s string, i *int) set {
		out := set{}
		for {
			seq := set{0: true}
			for *i < len(s) && s[*i] != '|' && s[*i] != ')' {
				if s[*i] == ' ' {
					*i++
					continue
				}
				x := item(s, i)
				lo, hi := 1, 1
				if *i < len(s) {
					switch s[*i] {
					case '?':
						lo, hi = 0, 1
					case '*':
						lo, hi = 0, top
					case '+':
						lo, hi = 1, top
					case '{':
						j := strings.IndexByte(s[*i:], '}')
						a, b, comma := strings.Cut(s[*i+1:*i+j], ",")
						lo, _ = strconv.Atoi(a)
						hi = lo
						if comma {
							hi = top
							if b != "" {
								hi, _ = strconv.Atoi(b)
							}
						}
						*i += j
					default:
						*i--
					}
					*i++
				}
				rep, acc := set{}, set{0: true}
				for k := 0; k <= hi && len(acc) > 0; k++ {
					if k >= lo {
						for n := range acc {
							rep[n] = true
						}
					}
					acc = sum(acc, x)
				}
				seq = sum(seq, rep)
			}
			for n := range seq {
				out[n] = true
			}
			if *i < len(s) && s[*i] == '|' {
				*i++
				continue
			}
			return out
		}
	}
	i := 0
	return alternates(rules["root"], &i)
}

// Long repetitions written as chunks are the same language: x{lo,hi} matches
// exactly lo to hi x's.
func TestGBNFLongRepetitionIsExact(t *testing.T) {
	for _, c := range []struct{ lo, hi int }{{0, 65}, {0, 96}, {0, 97}, {0, 130}, {3, 200}, {70, 140}, {0, 1024}, {100, -1}} {
		w := &gbnfWriter{named: map[string]bool{}, atoms: map[string]string{}}
		body := w.expr(rep{lit("A"), c.lo, c.hi})
		g := "root ::= " + body + "\n" + strings.Join(w.rules, "\n")
		if _, err := checkLlamaLimits(g); err != nil {
			t.Errorf("{%d,%d}: %v", c.lo, c.hi, err)
		}
		top := c.hi + 40
		if c.hi < 0 {
			top = c.lo + 80
		}
		got := lengths(t, g, top)
		for n := 0; n <= top; n++ {
			want := n >= c.lo && (c.hi < 0 || n <= c.hi)
			if got[n] != want {
				t.Fatalf("{%d,%d} written %q: %d matches %v, want %v", c.lo, c.hi, g, n, got[n], want)
			}
		}
	}
}

// A bound a server's schema-to-grammar conversion cannot take is left out of
// the schema sent to servers (the call is still validated against it), and
// ShrunkForServers names it for `clawedge tools check`; smaller bounds stay.
func TestServerSchemaLeavesOutLargeBounds(t *testing.T) {
	tool := ToolSpec{Name: "t/big", Params: []ArgSpec{
		{Name: "text", Type: TypeString, Required: true, MaxLen: 1500},
		{Name: "tags", Type: TypeArray, Items: &ArgSpec{Type: TypeString, MaxLen: 20}, MaxItems: 1200},
		{Name: "note", Type: TypeString, MaxLen: 1000},
	}}
	s, err := ParamsSchema(tool)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(s), "1500") || strings.Contains(string(s), "1200") || !strings.Contains(string(s), `"maxLength":1000`) || !strings.Contains(string(s), `"maxLength":20`) {
		t.Errorf("schema %s", s)
	}
	if open := ToolSchema(tool, SchemaOptions{}); !strings.Contains(string(open), "1500") {
		t.Errorf("the schema shown to a model keeps every bound: %s", open)
	}
	if got := strings.Join(ShrunkForServers(tool), "; "); got != "text: maxLength 1500; tags: maxItems 1200" {
		t.Errorf("ShrunkForServers: %q", got)
	}
}
