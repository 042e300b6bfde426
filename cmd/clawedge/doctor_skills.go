package main

import (
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/skills"
)

// skillChecks are doctor's lines about the installed skills: each one that
// loads (who signed it, its tools and whether they are allowed), each one
// refused at load (the file that changed, the key no longer trusted), and
// whether a root daemon's skill programs can reach their folders.
func skillChecks(cfg *config.Config, euid int) []check {
	a := &app{cfg: cfg}
	list := a.loadSkills()
	var checks []check
	for _, s := range list {
		c := check{what: "skill " + s.Name(), ok: true}
		signed := "signed by " + s.SignedBy
		if s.SignedBy == "" {
			signed = "unsigned (skills.allow_unsigned)"
		}
		c.info = fmt.Sprintf("%s, %d tool(s)", signed, len(s.Tools))
		if len(s.Tools) > 0 {
			if s.Granted {
				c.info += ", granted at install"
			} else {
				c.info += ", denied to the model and programs until a policy rule names them"
			}
			if err := skills.Reachable(s.Dir, euid); err != nil {
				c.ok, c.info = false, err.Error()
				c.fix = "chmod o+x the folder named (the store's files stay 0600), or run clawedge as its own user (the Debian package does)"
			}
		}
		checks = append(checks, c)
	}
	for _, err := range a.skillErrs {
		msg := err.Error()
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "skill "), ":")
		checks = append(checks, check{what: "skill " + termsafe.Line(name), info: termsafe.Line(msg),
			fix: fmt.Sprintf("reinstall it from a copy you trust (clawedge skill rm %s, then clawedge skill install), or check skills.trust", termsafe.Line(name))})
	}
	return checks
}
