package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/tools/toolstest"
)

// TestToolsCheckPerTool: a tool listed twice is refused in the report, the
// rest of the file is checked (exit 1, as one is refused); a default of the
// wrong type is a warning on an exact tool; a name the command language
// cannot write is renamed, with a warning; a free-form object and a property
// named _from are exact.
func TestToolsCheckPerTool(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(file, []byte(`[{"name":"__get_all_user_list","inputSchema":{"type":"object","properties":{}}},
 {"name":"flights","inputSchema":{"type":"object","properties":{"_from":{"type":"string"},"direct":{"type":"boolean","default":"True"},"extra":{"type":"object"}},"required":["_from"]}},
 {"name":"weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}},
 {"name":"weather","inputSchema":{"type":"object"}}]`), 0o600)
	out := runCLI(t, 1, "", "tools", "check", file)
	for _, re := range []string{
		`(?m)^x__get_all_user_list +exact +compile [0-9.]+ ms, [1-9][0-9]* states\n +warning: named x__get_all_user_list: "__get_all_user_list" is not a name of the command language`,
		`(?m)^flights +exact +compile [0-9.]+ ms, [1-9][0-9]* states\n +warning: property direct: default "True" ignored: `,
		`(?m)^weather +exact +compile`,
		`(?m)^weather +refused: spec 4: tool "weather" listed twice`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("tools check: no %s in\n%s", re, out)
		}
	}
	var checks []toolCheck
	if err := json.Unmarshal([]byte(runCLI(t, 1, "", "tools", "check", "--json", file)), &checks); err != nil || len(checks) != 4 ||
		checks[0].Status != "exact" || len(checks[0].Warnings) != 1 || checks[1].Status != "exact" || len(checks[1].Warnings) != 1 ||
		checks[2].Status != "exact" || checks[3].Status != "refused" {
		t.Errorf("--json: %+v %v", checks, err)
	}
}

// TestToolsCheckBFCL: the BFCL's 3,384 tool schemas in one file
// (tools/testdata/bfcl): every tool reported, at least 99.7 % exact, none
// refused; the four whose names start with "_" renamed, with a warning.
func TestToolsCheckBFCL(t *testing.T) {
	data := toolstest.BFCLJSON(t)
	file := filepath.Join(t.TempDir(), "bfcl.json")
	os.WriteFile(file, data, 0o600)
	var checks []toolCheck
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "tools", "check", "--json", file)), &checks); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	renamed := 0
	for _, c := range checks {
		count[c.Status]++
		if c.Status == "refused" {
			t.Errorf("%s refused: %s", c.Name, c.Reason)
		}
		if strings.HasPrefix(c.Name, "x__") && len(c.Warnings) > 0 && strings.HasPrefix(c.Warnings[0], "named "+c.Name+": ") {
			renamed++
		}
	}
	t.Logf("tools check: %v of %d", count, len(checks))
	if len(checks) != 3384 || count["refused"] != 0 || renamed != 4 || float64(count["exact"]) < 0.997*float64(len(checks)) {
		t.Errorf("tools check: %v of %d, %d renamed; want 3384 tools, none refused, 4 renamed, at least 99.7 %% exact", count, len(checks), renamed)
	}
}
