package grammar

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Bounds of a free-form object (ArgSpec.AnyProps): it and the objects and
// arrays in it nest at most FreeDepth deep (a dict whose values may be lists
// or objects of scalars), and it has at most FreeMembers members; the
// containers inside it are bounded by depth only. Each level and each bounded
// count multiplies the automaton, which must remember them: one such object
// in one call takes about 2,100 states (8,600 and 50 ms to compile with the
// default 4 calls); depth 3 would take 8,500 per call (0.6 s), depth 3 with 8
// members at every level about 44,000.
const (
	FreeDepth   = 2
	FreeMembers = 8
)

// freeObject is any JSON object of at most FreeMembers members whose values
// nest at most depth-1 further objects and arrays, written as the JSON forms
// write arguments (", " between members, ": " after a key).
func freeObject(depth int) node {
	return rule{"json-object-top", list("{", ", ", "}", freeMember(depth), 0, FreeMembers)}
}

func freeMember(depth int) node { return seq{freeString, lit(": "), freeValue(depth - 1)} }

// freeValue is any JSON value nested at most depth objects and arrays deep.
func freeValue(depth int) node {
	choices := alt{freeString, freeNumber, lit("true"), lit("false"), lit("null")}
	if depth > 0 {
		d := strconv.Itoa(depth)
		choices = append(choices,
			rule{"json-object-" + d, list("{", ", ", "}", freeMember(depth), 0, 0)},
			rule{"json-array-" + d, list("[", ", ", "]", freeValue(depth-1), 0, 0)})
	}
	return rule{"json-value-" + strconv.Itoa(depth), choices}
}

// freeString is any JSON string; freeNumber a plain decimal, as the
// parameters' numbers are written (no exponent), of any length like a string
// without max_len: bounded digits or range checks would multiply the
// automaton at every level.
var (
	freeString node = rule{"json-string", seq{lit(`"`), rep{jsonChar, 0, -1}, lit(`"`)}}
	freeNumber node = rule{"json-number", seq{
		opt(lit("-")),
		alt{lit("0"), seq{class{{'1', '9'}}, rep{digit, 0, -1}}},
		opt(seq{lit("."), rep{digit, 1, -1}}),
	}}
)

// jsonLiteral writes one JSON value (a parameter's Values) as the JSON forms
// write arguments: ", " between members and items, ": " after a key, keys
// sorted, strings quoted as jsonString does, numbers as given. The model
// writes the value exactly so.
func jsonLiteral(raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return "", fmt.Errorf("%s is not one JSON value", QuoteShort(string(raw)))
	}
	var b strings.Builder
	writeLiteral(&b, v)
	return b.String(), nil
}

func writeLiteral(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case json.Number:
		b.WriteString(x.String())
	case string:
		b.WriteString(jsonString(x))
	case []any:
		b.WriteByte('[')
		for i, it := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeLiteral(b, it)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(jsonString(k))
			b.WriteString(": ")
			writeLiteral(b, x[k])
		}
		b.WriteByte('}')
	}
}
