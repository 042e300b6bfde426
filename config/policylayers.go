package config

import (
	"fmt"
	"strconv"

	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/goccy/go-yaml/ast"
)

// The policy's other layers (docs/security.md), beside default, tools and
// channels in policy.go:
//
//	policy:
//	  profile: hardware             # minimal | hardware | full (default)
//	  users:                        # per caller id
//	    "telegram:123": {"group:gpio": allow, sys/exec: deny}
//	  automations:                  # per automation (its calls are auto:<name>)
//	    porch-off: {"*": deny, gpio/write: allow}
//	  elevated: ["group:exec", gpio/pulse]   # run only in an owner's /elevated window
//	  owners: ["telegram:123", console]    # who may send /elevated 10m
//
// Rule keys and elevated entries are tool patterns or groups, the profile
// one of the profiles, users' keys and owners principals: all as the
// policy's vocabulary defines them (package vocab), so that the config
// accepts what the policy understands and nothing else.

// decodeLayer decodes one of the layer keys of policy; false: not one.
func (d *decoder) policyLayer(k string, v ast.Node, p *Policy) {
	path := "policy." + k
	switch k {
	case "profile":
		d.str(v, path, &p.Profile)
	case "users", "automations":
		sets := map[string]map[string]string{}
		if d.entries(v, path, func(name string, v ast.Node) {
			rules := map[string]string{}
			d.rules(v, path+"."+name, rules)
			sets[name] = rules
		}) {
			if k == "users" {
				p.Users = nilIfEmpty(sets)
			} else {
				p.Automations = nilIfEmpty(sets)
			}
		}
	case "elevated":
		p.Elevated = d.strings(v, path)
	case "owners":
		p.Owners = d.strings(v, path)
	}
}

func (d *decoder) validatePolicyLayers(p *Policy) {
	d.oneOf("policy.profile", p.Profile, vocab.ProfileNames)
	for _, set := range []struct {
		key  string
		sets map[string]map[string]string
	}{{"policy.users", p.Users}, {"policy.automations", p.Automations}} {
		for _, name := range byPosition(d, set.key+".", set.sets) {
			if set.key == "policy.users" {
				if _, err := vocab.Principal(name); err != nil {
					d.add(d.keyAt(set.key+"."+name), "%s: %v", set.key, err)
					continue
				}
			} else if !vocab.Automation(name) {
				d.add(d.keyAt(set.key+"."+name), "%s: %s is not an automation name: a lower-case letter, then lower-case letters, digits, _ and -, at most 32", set.key, strconv.Quote(name))
				continue
			}
			d.validateRules(set.key+"."+name, set.sets[name])
		}
	}
	for i, pat := range p.Elevated {
		path := fmt.Sprintf("policy.elevated[%d]", i)
		if err := vocab.CheckPattern(pat); err != nil {
			d.errf(path, "%v", err)
		}
	}
	for i, o := range p.Owners {
		if _, err := vocab.Principal(o); err != nil {
			d.errf(fmt.Sprintf("policy.owners[%d]", i), "%v", err)
		}
	}
}

// writePolicyLayers writes the layer keys for Redacted.
func (c *Config) writePolicyLayers(w *writer, writeRules func(level int, key string, rules map[string]string)) {
	p := c.Policy
	w.kv(1, "profile", w.str(p.Profile))
	for _, set := range []struct {
		key  string
		sets map[string]map[string]string
	}{{"users", p.Users}, {"automations", p.Automations}} {
		if len(set.sets) == 0 {
			continue
		}
		w.key(1, set.key)
		for _, name := range sortedKeys(set.sets) {
			writeRules(2, yamlKey(name), set.sets[name])
		}
	}
	for _, list := range []struct {
		key   string
		items []string
	}{{"elevated", p.Elevated}, {"owners", p.Owners}} {
		if len(list.items) == 0 {
			continue
		}
		w.key(1, list.key)
		for _, s := range list.items {
			w.item(2, w.str(s))
		}
	}
}
