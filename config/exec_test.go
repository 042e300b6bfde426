package config

import (
	"reflect"
	"testing"
)

// issue16 is the exec section of issue 16, a contract.
const issue16 = `exec:
  mode: allowlist                  # deny (default) | allowlist | full
  allow: [{program: /usr/bin/vcgencmd, args: ["measure_temp|get_throttled"]}]   # args: one regexp per position
  paths: {read: [/etc/hostname, /sys/class/thermal], write: [/tmp/clawedge-exec]}
  network: false
  limits: {cpu_s: 5, memory_mb: 64, nproc: 16, fsize_mb: 8, output_kb: 64}
`

func TestExecIssueExample(t *testing.T) {
	c := mustParse(t, issue16)
	want := Exec{Mode: "allowlist", Allow: []ExecAllow{{Program: "/usr/bin/vcgencmd", Args: []string{"measure_temp|get_throttled"}}},
		Paths:  ExecPaths{Read: []string{"/etc/hostname", "/sys/class/thermal"}, Write: []string{"/tmp/clawedge-exec"}},
		Limits: ExecLimits{CPUSeconds: 5, MemoryMB: 64, NProc: 16, FSizeMB: 8, OutputKB: 64}}
	if !reflect.DeepEqual(c.Exec, want) {
		t.Errorf("exec = %+v\nwant %+v", c.Exec, want)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip changed the config:\n%s", out)
	}
	if d := mustParse(t, ""); d.Exec.Mode != "deny" {
		t.Errorf("default mode %q, want deny", d.Exec.Mode)
	}
}

func TestExecErrors(t *testing.T) {
	const a = "exec:\n  mode: full\n"
	for _, tc := range []struct{ src, at, msg string }{
		{"exec: {mode: sometimes}\n", "sometimes", "exec.mode"},
		{"exec: {mode: allowlist}\n", "allowlist", "needs at least one exec.allow entry"},
		{a + "  allow: [{args: [x]}]\n", "{args", "program is required"},
		{a + "  allow: [{program: \"/bin/sh -c 'reboot'\"}]\n", "\"/bin/sh", "looks like a shell command"},
		{a + "  allow: [{program: vcgencmd}]\n", "vcgencmd", "not an absolute path"},
		{a + "  allow: [{program: /usr/bin/x, args: [\"(\"]}]\n", "\"(\"", "not a regular expression"},
		{a + "  paths: {read: [/tmp/../etc]}\n", "/tmp/../etc", `not a clean path (no "..", ".", "//" or trailing "/"): write "/etc"`},
		{a + "  paths: {write: [tmp/out]}\n", "tmp/out", "not an absolute path"},
		{a + "  limits: {nproc: 0}\n", "0}", "exec.limits.nproc: must be from 1 to 4096"},
		{a + "  limits: {cpu_s: 99999}\n", "99999", "exec.limits.cpu_s"},
		{a + "  netwrk: true\n", "netwrk", `unknown key "netwrk" in exec`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
