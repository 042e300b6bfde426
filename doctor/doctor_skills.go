package doctor

import (
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/skills"
)

// Skills are doctor's lines about the installed skills: each one that
// loads (who signed it, its tools and whether they are allowed), each one
// refused at load (the file that changed, the key no longer trusted), and
// whether a root daemon's skill programs can reach their folders.
func Skills(cfg *config.Config, euid int) []Check {
	list, errs := daemon.InstalledSkills(cfg)
	var checks []Check
	for _, s := range list {
		c := Check{What: "skill " + s.Name(), OK: true}
		signed := "signed by " + s.SignedBy
		if s.SignedBy == "" {
			signed = "unsigned (skills.allow_unsigned)"
		}
		c.Info = fmt.Sprintf("%s, %d tool(s)", signed, len(s.Tools))
		if len(s.Tools) > 0 {
			if s.Granted {
				c.Info += ", granted at install"
			} else {
				c.Info += ", denied to the model and programs until a policy rule names them"
			}
			if err := skills.Reachable(s.Dir, euid); err != nil {
				c.OK, c.Info = false, err.Error()
				c.Fix = "chmod o+x the folder named (the store's files stay 0600), or run clawedge as its own user (the Debian package does)"
			}
		}
		checks = append(checks, c)
	}
	for _, err := range errs {
		msg := err.Error()
		name, _, _ := strings.Cut(strings.TrimPrefix(msg, "skill "), ":")
		checks = append(checks, Check{What: "skill " + termsafe.Line(name), Info: termsafe.Line(msg),
			Fix: fmt.Sprintf("reinstall it from a copy you trust (clawedge skill rm %s, then clawedge skill install), or check skills.trust", termsafe.Line(name))})
	}
	return checks
}
