package tools_test

import (
	"strings"
	"testing"

	"github.com/clawedge/clawedge/tools"
)

func TestParseReadCheck(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`@gpio/read{pin="led"} is high`, `@gpio/read{pin="led"} is high`},
		{`@gpio/read{pin='led'}   IS LOW`, `@gpio/read{pin="led"} is low`},
		{`@sensor/temp{} above 24.5`, `@sensor/temp{} above 24.5`},
		{`@sensor/temp{} between 18 and 24`, `@sensor/temp{} between 18 and 24`},
	} {
		c, err := tools.ParseReadCheck(tc.in)
		if err != nil || c.String() != tc.want {
			t.Errorf("ParseReadCheck(%q) = %q, %v; want %q", tc.in, c, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{`gpio read is high`, "a check is a read and a condition"},
		{`@gpio/read{pin="led"} is warm`, "want is high, is low"},
		{`@gpio/read{pin="led"} above x`, `"x" is not a number`},
		{`@a/b{} -> @c/d{} is high`, "one invocation"},
		{`@gpio/read{pin=$prev.x} is high`, "references"},
		{`@t/t{} between 5 and 1`, "above the second"},
		{`@gpio/read{pin="led} is high`, "line 1"},
	} {
		if _, err := tools.ParseReadCheck(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseReadCheck(%q) = %v, want %q", tc.in, err, tc.want)
		}
	}
	c, _ := tools.ParseReadCheck(`@t/t{} between 18 and 24`)
	for v, want := range map[float64]bool{17.9: false, 18: true, 21: true, 24: true, 24.1: false} {
		if c.Holds(v) != want {
			t.Errorf("between 18 and 24 holds for %g = %v", v, !want)
		}
	}
	high, _ := tools.ParseReadCheck(`@t/t{} is high`)
	if !high.Holds(1) || high.Holds(0) {
		t.Error("is high")
	}
}

// FuzzParseReadCheck: whatever follows --until or goal/add's until,
// ParseReadCheck returns a check or an error, never panics; a check it
// returns reads back as itself.
func FuzzParseReadCheck(f *testing.F) {
	for _, s := range []string{`@gpio/read{pin="led"} is high`, `@t/t{} between 1 and 2`, `@t/t{} above -1e3`, `@a{x=(1,2)} below 0`, `@x/y{} is`, `}{ above`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c, err := tools.ParseReadCheck(text)
		if err != nil {
			return
		}
		again, err := tools.ParseReadCheck(c.String())
		if err != nil || again.String() != c.String() {
			t.Fatalf("%q reads back as %q: %v", c.String(), again.String(), err)
		}
	})
}
