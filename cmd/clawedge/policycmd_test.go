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
`)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"sys/exec", "--user", "123"}, []string{"profile   deny   profile hardware does not include it", "sys/exec for telegram:123 on telegram: deny (decided by profile"}},
		{[]string{"gpio/write", "--user", "9"}, []string{`user      deny   policy.users.telegram:9 "group:gpio": deny`, "decided by user"}},
		{[]string{"gpio/write", "--automation", "porch"}, []string{"automation  allow", "gpio/write for auto:porch on auto: allow (every layer allows it)"}},
		{[]string{"gpio/read", "--automation", "porch"}, []string{"decided by automation"}},
		{[]string{"gpio/read", "--channel", "console"}, []string{"gpio/read for anyone on console: allow"}},
	} {
		got := runCLI(t, 0, "", append([]string{"policy", "explain", "--config", cfgPath}, tc.args...)...)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("policy explain %v:\n%s\nwant it to contain %q", tc.args, got, w)
			}
		}
	}
}
