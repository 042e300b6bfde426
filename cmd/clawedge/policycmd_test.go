package main

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/policy/vocab"
)

// policy explain prints each layer's verdict and which one decided, with the
// config's layers converted as the daemon converts them.
func TestPolicyExplain(t *testing.T) {
	cfgPath, _ := writeConfig(t, `exec: {mode: full}
policy:
  profile: hardware
  elevated: ["group:exec"]
  owners: ["telegram:123"]
  users: {"telegram:9": {"group:gpio": deny}}
  automations: {porch: {"*": deny, gpio/write: allow}}
automations:
  porch: {when: {cron: "0 23 * * *"}, do: '@gpio/write{pin="led";value=0}'}
`)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"sys/exec", "--as", "model:telegram:123"}, []string{"profile   deny   profile hardware does not include it", "sys/exec for the model for telegram:123 on telegram: deny (decided by profile"}},
		// The same person typing the command: their own act; the profile is the model's.
		{[]string{"sys/exec", "--as", "telegram:123"}, []string{"sys/exec for telegram:123 on telegram: allow"}},
		{[]string{"gpio/write", "--as", "model:telegram:9"}, []string{`user      deny   policy.users.telegram:9 "group:gpio": deny`, "decided by user"}},
		{[]string{"gpio/write", "--as", "telegram:9"}, []string{"decided by user"}},
		{[]string{"gpio/write", "--as", "auto:porch"}, []string{`policy.automations.porch "gpio/write": allow`, "creator user", "no rule for config", "gpio/write for auto:porch (automation) on auto: allow (every layer allows it)"}},
		{[]string{"gpio/read", "--as", "auto:porch"}, []string{"decided by automation"}},
		// Added at run time by an MCP host: its creator's rules hold it too.
		{[]string{"sys/exec", "--as", "auto:other", "--creator", "mcp:claude"}, []string{"creator profile", "decided by creator profile"}},
		{[]string{"sys/exec", "--as", "auto:other", "--creator", "console"}, []string{"sys/exec for auto:other (automation) on auto: allow"}},
		{[]string{"gpio/read", "--as", "console", "--channel", "console/ttyS0"}, []string{"gpio/read for console on console/ttyS0: allow"}},
		{[]string{"gpio/read", "--as", "mqtt"}, []string{"gpio/read for mqtt (program) on mqtt: allow"}},
	} {
		got := runCLI(t, 0, "", append([]string{"policy", "explain", "--config", cfgPath}, tc.args...)...)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("policy explain %v:\n%s\nwant it to contain %q", tc.args, got, w)
			}
		}
	}
}

// An MCP host's rule set may allow the tools without effects as a group:
// config check accepts it, and policy explain shows it deciding a read (the
// registry the daemon would have says what is without effects), while a
// write still falls to the default.
func TestPolicyExplainGroupReadonlyForMCP(t *testing.T) {
	cfgPath, _ := writeConfig(t, `policy:
  default: deny
  channels:
    mcp: {"group:readonly": allow}
`)
	if out := runCLI(t, 0, "", "config", "check", cfgPath); !strings.Contains(out, ": ok (") {
		t.Fatalf("config check: %s", out)
	}
	out := runCLI(t, 0, "", "policy", "explain", "--config", cfgPath, "gpio/read", "--as", "mcp:x")
	for _, w := range []string{`rules     allow  policy.channels.mcp "group:readonly": allow`, "gpio/read for mcp:x (program) on mcp: allow"} {
		if !strings.Contains(out, w) {
			t.Errorf("policy explain gpio/read --as mcp:x:\n%s\nwant %q", out, w)
		}
	}
	out = runCLI(t, 0, "", "policy", "explain", "--config", cfgPath, "gpio/write", "--as", "mcp:x")
	if !strings.Contains(out, "decided by rules: policy.default: deny") {
		t.Errorf("policy explain gpio/write --as mcp:x:\n%s", out)
	}
}

// cli runs the built binary and returns its output and exit code.
func cli(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cmd.Dir)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// config check and policy explain agree on generated rules: config check
// accepts a rule iff policy explain explains some call by it, and a rule it
// refuses, policy explain refuses with the same problem at the same
// line:column (both load the config one way, and the policy is
// policy.FromConfig's in both). group:skills needs an installed skill: the
// policy package's tests cover it (policy/vocabulary_test.go).
func TestPolicyExplainAgreesWithConfigCheck(t *testing.T) {
	// The rules of the policy's vocabulary, which both must take, and
	// malformed ones, which both must refuse.
	vocabulary := []string{"*", "gpio/*", "gpio/read", "srv/*", "srv/query", "i2c/scan"}
	for _, g := range vocab.GroupNames {
		if g != "group:skills" {
			vocabulary = append(vocabulary, g)
		}
	}
	patterns := append(slices.Clone(vocabulary), "group:nope", "group:readonli", "GROUP:gpio", "gpio", "gpio/**", "*/read", "srv/", "gpio/read/x")
	calls := []string{"gpio/read", "gpio/write", "serial/read", "i2c/scan", "sensor/read", "spi/transfer", "sys/exec", "auto/add", "srv/query"}
	accepted := 0
	for _, p := range patterns {
		q := strconv.Quote(p)
		cfgPath, _ := writeConfig(t, "mcp:\n  servers:\n    srv: {url: \"http://127.0.0.1:1/mcp\"}\npolicy:\n  channels:\n    mcp: {"+q+": deny}\n")
		check, code := cli(t, "config", "check", cfgPath)
		explained := ""
		for _, tool := range calls {
			out, ecode := cli(t, "policy", "explain", "--config", cfgPath, tool, "--as", "mcp:x")
			if ecode != 0 {
				// The config is refused: the same problem as config check's.
				line := strings.SplitN(strings.TrimSpace(check), "\n", 2)[0]
				if code == 0 || !strings.Contains(line, cfgPath+":7:") || !strings.Contains(out, line) {
					t.Errorf("%s: policy explain refuses the config:\n%s\nconfig check (exit %d):\n%s", q, out, code, check)
				}
				break
			}
			if strings.Contains(out, "policy.channels.mcp "+q+": deny") {
				explained = tool
				break
			}
		}
		if (code == 0) != (explained != "") {
			t.Errorf("rule %s: config check exit %d, policy explain explains a call by it: %q\n%s", q, code, explained, check)
		}
		if code == 0 {
			accepted++
		} else if slices.Contains(vocabulary, p) {
			t.Errorf("rule %s, of the policy's vocabulary, is refused:\n%s", q, check)
		}
	}
	if accepted != len(vocabulary) {
		t.Errorf("%d of %d generated rules accepted, want the %d of the vocabulary", accepted, len(patterns), len(vocabulary))
	}
}

// --as reads a principal as policy.users names one: a console's user name
// is a person at the console, and an id no door gives is refused, saying
// which forms there are.
func TestPolicyExplainPrincipals(t *testing.T) {
	cfgPath, _ := writeConfig(t, "policy:\n  users: {pi: {gpio/write: deny}}\n")
	out := runCLI(t, 0, "", "policy", "explain", "--config", cfgPath, "gpio/write", "--as", "model:pi")
	if !strings.Contains(out, `policy.users.pi "gpio/write": deny`) || !strings.Contains(out, "on console/stdin: deny") {
		t.Errorf("--as model:pi:\n%s", out)
	}
	for as, want := range map[string]string{
		"telegram:@ann": `--as: "telegram:@ann" is not a principal: want telegram:ID, ID a Telegram user's number`,
		"telegrm:1":     `no door "telegrm"; want console, uid:N, telegram:ID, web:NAME, mcp:NAME, mqtt, board:NAME, auto:NAME or a console's user name, or model: before one of them`,
		"model:goal:1":  `a goal acts with its owner's rights`,
	} {
		if out, code := cli(t, "policy", "explain", "--config", cfgPath, "gpio/write", "--as", as); code == 0 || !strings.Contains(out, want) {
			t.Errorf("--as %s: exit %d\n%s\nwant %q", as, code, out, want)
		}
	}
}
