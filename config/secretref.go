package config

import (
	"regexp"
	"strconv"
)

// SecretLookup returns the value of the secret name from the secret store
// (`clawedge secret set NAME`). config imports nothing of ours, so the
// command passes it in. Its errors must not hold a value.
type SecretLookup func(name string) (string, error)

var secretRefName = shortRE{regexp.MustCompile(`^[A-Za-z0-9_.-]+$`), 64}

// secretRef resolves ${secret:NAME}. It is accepted in secret fields only
// (telegram.token, api keys, passwords): anywhere else the value would be
// printed by config check and logged.
func (d *decoder) secretRef(name string, at pos, path string) (string, bool) {
	ref := "${secret:" + name + "}"
	switch {
	case !secretRefName.MatchString(name):
		d.add(at, "%s: invalid reference %s: a secret's name is 1 to 64 letters, digits, _, . or -", path, strconv.Quote(ref))
		return "", false
	case d.inSecret == "":
		d.add(at, "%s: %s may only be used in a secret field (tokens, API keys, passwords), whose value is never printed", path, ref)
		return "", false
	case d.secretFn == nil:
		d.add(at, "%s: %s: no secret store is available here", path, ref)
		return "", false
	}
	v, err := d.secretFn(name)
	if err != nil {
		d.add(at, "%s: %s: %v", path, ref, err)
		return "", false
	}
	return v, true
}
