package main

import (
	"strings"
	"testing"
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
