package policy

import (
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/clawedge/clawedge/tools"
)

// CallerOf reads a principal as `policy explain --as` takes it: the caller
// each door makes for it, as the policy's vocabulary names the doors (the
// same principals policy.users and policy.owners may name).
func CallerOf(as, channel string) (tools.Caller, error) {
	model := false
	if rest, ok := strings.CutPrefix(as, "model:"); ok {
		model, as = true, rest
	}
	door, err := vocab.Principal(as)
	if err != nil {
		return tools.Caller{}, fmt.Errorf("--as: %w, or model: before one of them", err)
	}
	c := tools.Caller{User: as, Channel: door.Channel, Actor: tools.Person}
	switch {
	case model:
		c.Actor = tools.Model
	case door.Actor == "program":
		c.Actor = tools.Program
	case door.Actor == "automation":
		c.Actor = tools.Automation
	}
	if channel != "" {
		c.Channel = channel
	}
	return c, nil
}
