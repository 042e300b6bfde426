package grammar

// Args are arguments that passed validation against a tool's ToolSpec: every value is
// concrete (references resolved), of the declared type, in range, and absent
// optional parameters with a default hold it. The accessors therefore cannot
// fail; an absent parameter without a default reads as the zero value, so use
// Has to tell "absent" from "zero".
type Args struct {
	values map[string]Value
}

// Has reports whether the parameter was given.
func (a Args) Has(name string) bool { _, ok := a.values[name]; return ok }

// Value returns the raw validated value.
func (a Args) Value(name string) (Value, bool) { v, ok := a.values[name]; return v, ok }

func (a Args) String(name string) string { return a.values[name].Str }
func (a Args) Int(name string) int64     { return a.values[name].Int }
func (a Args) Bool(name string) bool     { return a.values[name].Bool }

// Float returns a number parameter; integers given for a number widen.
func (a Args) Float(name string) float64 {
	v := a.values[name]
	if v.Kind == Int {
		return float64(v.Int)
	}
	return v.Float
}

// Strings returns an array-of-strings parameter.
func (a Args) Strings(name string) []string {
	items := a.values[name].Items
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Str
	}
	return out
}
