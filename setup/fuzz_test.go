package setup

import (
	"strings"
	"testing"
)

// FuzzSetupAnswers: setup's list answers (typed, or --pins, --ports, --buses
// and --remote flags) never panic, and what they accept either makes a board
// the config takes or is refused with a reason, before anything is written.
func FuzzSetupAnswers(f *testing.F) {
	for _, s := range []string{"led=17:out button=27:in", "a=17:out b=17:in", "arduino=/dev/ttyUSB0:115200",
		"s=1", "led=99:out", "x=/dev/tty\"S0:9600", "=", "a=b=c", "name=lan,kind=openai,url=http://h:11434/v1,model=m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var w setupConfig
		w.driver = "sim"
		var errs [3]error
		w.pins, errs[0] = parseSetupList(s, parsePin)
		w.ports, errs[1] = parseSetupList(s, parsePort)
		w.buses, errs[2] = parseSetupList(s, parseBus)
		for _, err := range errs {
			if err != nil && err.Error() == "" {
				t.Fatalf("%q: an error without a reason", s)
			}
		}
		if err := checkBoard(w); err != nil && !strings.Contains(err.Error(), "the board answers") {
			t.Fatalf("%q: the refusal does not say where: %v", s, err)
		}
		if r, err := parseRemote(s); err == nil && (r.name == "" || r.model == "" || r.keyEnv == "") {
			t.Fatalf("%q: accepted as a remote model without name, model or key variable: %+v", s, r)
		}
	})
}

// FuzzKeptSections: the sections setup keeps from the file it replaces
// never panic, and never include a section it asks about.
func FuzzKeptSections(f *testing.F) {
	f.Add("data_dir: x\nweb:\n  listen: \":8080\"\n# c\nboard:\n  driver: sim\n")
	f.Add("# only comments\n\n")
	f.Add("policy: {owners: [a]}\ntelegram:\n  token: x\nmodels:\n  local: {path: a}\n")
	f.Add("- a\n  b: c\n\tweb: x\n")
	f.Fuzz(func(t *testing.T, prev string) {
		for _, line := range strings.Split(keptSections([]byte(prev)), "\n") {
			if line == "" || line[0] == ' ' || line[0] == '\t' || line[0] == '#' || line[0] == '-' {
				continue
			}
			key, _, _ := strings.Cut(line, ":")
			if asked[strings.TrimSpace(key)] {
				t.Fatalf("kept an asked section %q from %q", key, prev)
			}
		}
	})
}
