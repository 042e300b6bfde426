package config

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// The sys/exec tool: which programs the agent and people may run, and the
// sandbox they run in (docs/security.md).
//
//	exec:
//	  mode: allowlist                  # deny (default) | allowlist | full
//	  allow: [{program: /usr/bin/vcgencmd, args: ["measure_temp|get_throttled"]}]   # args: one regexp per position
//	  paths: {read: [/etc/hostname, /sys/class/thermal], write: [/tmp/clawedge-exec]}
//	  network: false
//	  limits: {cpu_s: 5, memory_mb: 64, nproc: 16, fsize_mb: 8, output_kb: 64}
//	  allow_without_landlock: false    # true: run on a kernel without Landlock, files unconfined
//
// Decoding, validation and the Redacted writer of the section are all in
// this file.

// Exec configures sys/exec. With mode deny the tool does not exist.
type Exec struct {
	Mode    string      `yaml:"mode"`
	Allow   []ExecAllow `yaml:"allow"`
	Paths   ExecPaths   `yaml:"paths"`
	Network bool        `yaml:"network"`
	Limits  ExecLimits  `yaml:"limits"`
	// AllowWithoutLandlock accepts a kernel without Landlock: children keep
	// seccomp, rlimits and the rest, but their file access is not confined.
	AllowWithoutLandlock bool `yaml:"allow_without_landlock"`
}

// ExecAllow is one allowed program and its arguments, one regular
// expression per position, each matched against the whole argument.
type ExecAllow struct {
	Program string   `yaml:"program"`
	Args    []string `yaml:"args"`
}

// ExecPaths are what a child may read and write besides the program and the
// system libraries.
type ExecPaths struct {
	Read  []string `yaml:"read"`
	Write []string `yaml:"write"`
}

// ExecLimits are a child's rlimits and the cap of its captured output.
type ExecLimits struct {
	CPUSeconds int `yaml:"cpu_s"`
	MemoryMB   int `yaml:"memory_mb"`
	NProc      int `yaml:"nproc"`
	FSizeMB    int `yaml:"fsize_mb"`
	OutputKB   int `yaml:"output_kb"`
}

var (
	execKeys      = []string{"mode", "allow", "paths", "network", "limits", "allow_without_landlock"}
	execAllowKeys = []string{"program", "args"}
	execPathKeys  = []string{"read", "write"}
	execLimitKeys = []string{"cpu_s", "memory_mb", "nproc", "fsize_mb", "output_kb"}
	execModes     = []string{"deny", "allowlist", "full"}
)

func defaultExec() Exec {
	return Exec{Mode: "deny", Limits: ExecLimits{CPUSeconds: 5, MemoryMB: 64, NProc: 16, FSizeMB: 8, OutputKB: 64}}
}

func (d *decoder) exec(n ast.Node, e *Exec) {
	d.fields(n, "exec", execKeys, func(k string, v ast.Node) {
		kp := "exec." + k
		switch k {
		case "mode":
			d.str(v, kp, &e.Mode)
		case "allow":
			var list []ExecAllow
			if d.items(v, kp, func(i int, v ast.Node) {
				ip := fmt.Sprintf("%s[%d]", kp, i)
				var a ExecAllow
				d.fields(v, ip, execAllowKeys, func(k string, v ast.Node) {
					switch k {
					case "program":
						d.str(v, ip+".program", &a.Program)
					case "args":
						a.Args = d.strings(v, ip+".args")
					}
				})
				list = append(list, a)
			}) {
				e.Allow = list // nil when empty
			}
		case "paths":
			d.fields(v, kp, execPathKeys, func(k string, v ast.Node) {
				switch k {
				case "read":
					e.Paths.Read = d.strings(v, kp+".read")
				case "write":
					e.Paths.Write = d.strings(v, kp+".write")
				}
			})
		case "network":
			d.boolean(v, kp, &e.Network)
		case "limits":
			l := &e.Limits
			d.fields(v, kp, execLimitKeys, func(k string, v ast.Node) {
				dst := map[string]*int{"cpu_s": &l.CPUSeconds, "memory_mb": &l.MemoryMB, "nproc": &l.NProc,
					"fsize_mb": &l.FSizeMB, "output_kb": &l.OutputKB}[k]
				d.intField(v, kp+"."+k, dst)
			})
		case "allow_without_landlock":
			d.boolean(v, kp, &e.AllowWithoutLandlock)
		}
	})
}

// strings decodes a list of strings.
func (d *decoder) strings(n ast.Node, path string) []string {
	var list []string
	d.items(n, path, func(i int, v ast.Node) {
		var s string
		d.str(v, fmt.Sprintf("%s[%d]", path, i), &s)
		list = append(list, s)
	})
	return list // nil when empty, as when absent
}

func (d *decoder) validateExec(e *Exec) {
	d.oneOf("exec.mode", e.Mode, execModes)
	if e.Mode == "allowlist" && len(e.Allow) == 0 {
		d.errf("exec.mode", "allowlist needs at least one exec.allow entry ({program: /usr/bin/vcgencmd, args: [measure_temp]})")
	}
	for i, a := range e.Allow {
		ip := fmt.Sprintf("exec.allow[%d]", i)
		if a.Program == "" {
			d.missing(ip+".program", " (the program's absolute path)")
		} else if msg := execPath(a.Program); msg != "" {
			d.errf(ip+".program", "%s %s", d.quote(ip+".program", a.Program), msg)
		}
		for j, re := range a.Args {
			ap := fmt.Sprintf("%s.args[%d]", ip, j)
			if _, err := regexp.Compile(re); err != nil {
				d.errf(ap, "%s is not a regular expression: %v", d.quote(ap, re), err)
			}
		}
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"exec.paths.read", e.Paths.Read}, {"exec.paths.write", e.Paths.Write}} {
		for i, p := range list.paths {
			pp := fmt.Sprintf("%s[%d]", list.key, i)
			if msg := execPath(p); msg != "" {
				d.errf(pp, "%s %s", d.quote(pp, p), msg)
			}
		}
	}
	l := e.Limits
	for _, f := range []struct {
		key    string
		v      int
		lo, hi int
	}{
		{"cpu_s", l.CPUSeconds, 1, 3600},
		{"memory_mb", l.MemoryMB, 8, 1 << 20},
		{"nproc", l.NProc, 1, 4096},
		{"fsize_mb", l.FSizeMB, 1, 1 << 20},
		{"output_kb", l.OutputKB, 1, 16384},
	} {
		if f.v < f.lo || f.v > f.hi {
			d.errf("exec.limits."+f.key, "must be from %d to %d, found %d", f.lo, f.hi, f.v)
		}
	}
}

// execPath says what is wrong with a program or allowlist path: it must be
// absolute and clean, so that what the file says is what is granted ("..",
// and a shell command line, are refused).
func execPath(p string) string {
	switch {
	case strings.ContainsAny(p, " \t\n;|&$`'\"<>(){}*?"):
		return "looks like a shell command: give an absolute path (arguments go in args)"
	case !filepath.IsAbs(p):
		return "is not an absolute path"
	case filepath.Clean(p) != p:
		return fmt.Sprintf("is not a clean path (no \"..\", \".\", \"//\" or trailing \"/\"): write %q", filepath.Clean(p))
	}
	return ""
}

// writeExec writes the exec section for Redacted.
func (c *Config) writeExec(w *writer) {
	e := c.Exec
	w.key(0, "exec")
	w.kv(1, "mode", w.str(e.Mode))
	list := func(level int, key string, items []string) {
		if len(items) == 0 {
			return
		}
		w.key(level, key)
		for _, s := range items {
			w.item(level+1, w.str(s))
		}
	}
	if len(e.Allow) > 0 {
		w.key(1, "allow")
		for _, a := range e.Allow {
			w.line(2, "- program: "+w.str(a.Program))
			list(3, "args", a.Args)
		}
	}
	if len(e.Paths.Read)+len(e.Paths.Write) > 0 {
		w.key(1, "paths")
	}
	list(2, "read", e.Paths.Read)
	list(2, "write", e.Paths.Write)
	w.kv(1, "network", strconv.FormatBool(e.Network))
	w.key(1, "limits")
	w.kv(2, "cpu_s", strconv.Itoa(e.Limits.CPUSeconds))
	w.kv(2, "memory_mb", strconv.Itoa(e.Limits.MemoryMB))
	w.kv(2, "nproc", strconv.Itoa(e.Limits.NProc))
	w.kv(2, "fsize_mb", strconv.Itoa(e.Limits.FSizeMB))
	w.kv(2, "output_kb", strconv.Itoa(e.Limits.OutputKB))
	w.kv(1, "allow_without_landlock", strconv.FormatBool(e.AllowWithoutLandlock))
}
