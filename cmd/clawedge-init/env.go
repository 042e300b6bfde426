package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The dashboard's setup page (and `clawedge setup`) writes the config's
// secrets into clawedge.env beside it, never into the config: a service
// gets them with systemd's EnvironmentFile=; on the image, init gives them
// to the daemon it starts (envBeside). The daemon writes its config to
// update.SetupConfigEnv, on /perm, whatever config it runs with (the image's default
// is on the read-only root); pickConfig takes it at the next boot.

var envName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

// envBeside is the NAME=value lines of clawedge.env beside the config cfg
// (values in single quotes, as setup writes them), for the daemon's
// environment; none when there is no such file. Names that could change
// how a program runs (PATH, LD_*, the notify socket) are not taken.
func envBeside(cfg string) []string {
	f, err := os.Open(filepath.Join(filepath.Dir(cfg), "clawedge.env"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") || !envName.MatchString(k) || k == "PATH" || k == "HOME" || k == "USER" ||
			strings.HasPrefix(k, "LD_") || strings.HasPrefix(k, "NOTIFY_") || strings.HasPrefix(k, "CLAWEDGE_") {
			continue
		}
		if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
			v = v[1 : len(v)-1]
		}
		out = append(out, k+"="+v)
	}
	return out
}
