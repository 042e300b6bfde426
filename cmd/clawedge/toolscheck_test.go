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

// TestToolsCheckPerTool: one tool with a name the model cannot write is
// refused in the report, the rest of the file is checked (exit 1, as one is
// refused); a default of the wrong type is a warning on an exact tool; a
// free-form object and a property named _from are exact.
func TestToolsCheckPerTool(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tools.json")
	os.WriteFile(file, []byte(`[{"name":"__get_all_user_list","inputSchema":{"type":"object","properties":{}}},
 {"name":"flights","inputSchema":{"type":"object","properties":{"_from":{"type":"string"},"direct":{"type":"boolean","default":"True"},"extra":{"type":"object"}},"required":["_from"]}},
 {"name":"weather","inputSchema":{"type":"object","properties":{"city":{"type":"string"}}}}]`), 0o600)
	out := runCLI(t, 1, "", "tools", "check", file)
	for _, re := range []string{
		`(?m)^__get_all_user_list +refused: spec 1: tool name "__get_all_user_list"`,
		`(?m)^flights +exact +compile [0-9.]+ ms, [1-9][0-9]* states\n +warning: property direct: default "True" ignored: `,
		`(?m)^weather +exact +compile`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("tools check: no %s in\n%s", re, out)
		}
	}
	var checks []toolCheck
	if err := json.Unmarshal([]byte(runCLI(t, 1, "", "tools", "check", "--json", file)), &checks); err != nil || len(checks) != 3 ||
		checks[0].Status != "refused" || checks[1].Status != "exact" || len(checks[1].Warnings) != 1 || checks[2].Status != "exact" {
		t.Errorf("--json: %+v %v", checks, err)
	}
}

// TestToolsCheckBFCL: the BFCL's 3,384 tool schemas in one file
// (tools/testdata/bfcl): every tool reported, at least 99 % exact, the four
// whose names start with "_" refused alone.
func TestToolsCheckBFCL(t *testing.T) {
	data := toolstest.BFCLJSON(t)
	file := filepath.Join(t.TempDir(), "bfcl.json")
	os.WriteFile(file, data, 0o600)
	var checks []toolCheck
	if err := json.Unmarshal([]byte(runCLI(t, 1, "", "tools", "check", "--json", file)), &checks); err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, c := range checks {
		count[c.Status]++
		if c.Status == "refused" && !strings.HasPrefix(c.Name, "_") {
			t.Errorf("%s refused: %s", c.Name, c.Reason)
		}
	}
	t.Logf("tools check: %v of %d", count, len(checks))
	if len(checks) != 3384 || count["refused"] != 4 || float64(count["exact"]) < 0.99*float64(len(checks)) {
		t.Errorf("tools check: %v of %d, want 3384 tools, 4 refused, at least 99 %% exact", count, len(checks))
	}
}
