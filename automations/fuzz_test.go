package automations

import (
	"testing"
	"time"
)

// FuzzCronTemplate checks, for any cron expression and notify template: parsing
// never panics; an accepted expression always yields a next run after the
// reference time (or none), in a DST zone too; render leaves no known
// placeholder behind in a template Check accepts.
//
// Seeds: testdata/fuzz/FuzzCronTemplate; run with
// go test ./automations -run X -fuzz FuzzCronTemplate -fuzztime 60s
func FuzzCronTemplate(f *testing.F) {
	loc, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, expr, tmpl string) {
		if c, err := parseCron(expr); err == nil {
			j := &job{spec: Spec{Cron: expr}, cron: c, loc: loc}
			at := time.Date(2026, 3, 29, 1, 0, 0, 0, loc)
			for range 3 {
				next := j.nextTime(at)
				if next.IsZero() {
					break
				}
				if !next.After(at) {
					t.Fatalf("%q: next %v not after %v", expr, next, at)
				}
				j.lastWall = floating(next.In(loc))
				at = next
			}
		}
		if checkTemplate(tmpl) == nil {
			out := render(tmpl, map[string]string{"{time}": "", "{value}": "", "{name}": "", "{result}": ""})
			if len(out) > len(tmpl) {
				t.Fatalf("render grew %q to %q with empty values", tmpl, out)
			}
		}
	})
}
