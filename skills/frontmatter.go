package skills

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Meta is a SKILL.md's front matter, as the Agent Skills format defines it.
type Meta struct {
	Name          string            // 1-64 of a-z, 0-9 and "-", the folder's name
	Description   string            // what it does and when to use it (1-1024 characters)
	License       string            // optional
	Compatibility string            // optional, at most 500 characters
	Metadata      map[string]string // optional
	AllowedTools  []string          // optional, "allowed-tools" (space-separated in the file)
}

// ParseSkillMD reads a SKILL.md: the front matter between the first two
// "---" lines, and the instructions after it. Keys the format does not
// define are ignored (collections add their own); the ones it defines must
// have the type and bounds it gives them.
func ParseSkillMD(data []byte) (Meta, string, error) {
	var m Meta
	if len(data) > MaxSkillMDBytes {
		return m, "", fmt.Errorf("SKILL.md: %d bytes, more than %d", len(data), MaxSkillMDBytes)
	}
	if !utf8.Valid(data) {
		return m, "", fmt.Errorf("SKILL.md: not UTF-8 text")
	}
	text := strings.ReplaceAll(string(bytes.TrimPrefix(data, []byte("\ufeff"))), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return m, "", fmt.Errorf("SKILL.md: line 1: want \"---\" opening the YAML front matter (name and description)")
	}
	fm, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		if fm, ok = strings.CutSuffix(rest, "\n---"); !ok {
			return m, "", fmt.Errorf("SKILL.md: the front matter has no closing \"---\" line")
		}
		body = ""
	}
	if len(fm) > MaxFrontMatter {
		return m, "", fmt.Errorf("SKILL.md: front matter of %d bytes, more than %d", len(fm), MaxFrontMatter)
	}
	raw, err := decodeYAML("SKILL.md front matter", []byte(fm))
	if err != nil {
		return m, "", err
	}
	str := func(key string, max int, dst *string) error {
		v, ok := raw[key]
		if !ok || v == nil {
			return nil
		}
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("SKILL.md front matter: %s must be a string, found %s", key, kind(v))
		}
		if utf8.RuneCountInString(s) > max {
			return fmt.Errorf("SKILL.md front matter: %s is %d characters, more than %d", key, utf8.RuneCountInString(s), max)
		}
		*dst = strings.TrimSpace(s)
		return nil
	}
	for _, f := range []struct {
		key string
		max int
		dst *string
	}{{"name", 64, &m.Name}, {"description", 1024, &m.Description}, {"license", 1024, &m.License}, {"compatibility", 500, &m.Compatibility}} {
		if err := str(f.key, f.max, f.dst); err != nil {
			return m, "", err
		}
	}
	if err := CheckName(m.Name); err != nil {
		return m, "", fmt.Errorf("SKILL.md front matter: %w", err)
	}
	if m.Description == "" {
		return m, "", fmt.Errorf("SKILL.md front matter: description is missing (say what the skill does and when to use it)")
	}
	if v, ok := raw["metadata"]; ok && v != nil {
		mm, ok := v.(map[string]any)
		if !ok {
			return m, "", fmt.Errorf("SKILL.md front matter: metadata must be a mapping of strings, found %s", kind(v))
		}
		if len(mm) > 64 {
			return m, "", fmt.Errorf("SKILL.md front matter: metadata has %d keys, more than 64", len(mm))
		}
		m.Metadata = map[string]string{}
		for k, v := range mm {
			s, ok := v.(string)
			if !ok {
				s = fmt.Sprint(v) // version: 1.0 is a number to YAML, a string to the format
				if _, nested := v.(map[string]any); nested || len(s) > 1024 {
					return m, "", fmt.Errorf("SKILL.md front matter: metadata.%s must be a string", k)
				}
			}
			m.Metadata[k] = s
		}
	}
	if v, ok := raw["allowed-tools"]; ok && v != nil {
		switch t := v.(type) {
		case string:
			m.AllowedTools = strings.Fields(t)
		case []any: // some collections write a list
			for _, e := range t {
				s, ok := e.(string)
				if !ok {
					return m, "", fmt.Errorf("SKILL.md front matter: allowed-tools must be strings")
				}
				m.AllowedTools = append(m.AllowedTools, s)
			}
		default:
			return m, "", fmt.Errorf("SKILL.md front matter: allowed-tools must be a space-separated string, found %s", kind(v))
		}
		if len(m.AllowedTools) > 256 {
			return m, "", fmt.Errorf("SKILL.md front matter: allowed-tools lists %d tools, more than 256", len(m.AllowedTools))
		}
	}
	return m, strings.TrimLeft(body, "\n"), nil
}

// CheckName checks a skill's name as the format defines it: 1 to 64 of
// lowercase letters, digits and hyphens, neither first nor last, never two
// in a row. The name is also the namespace of the skill's tools and its
// folder's name, so it can never hold a "/" or "..".
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("name is missing (1-64 of a-z, 0-9 and \"-\")")
	}
	ok := len(name) <= 64 && name[0] != '-' && name[len(name)-1] != '-' && !strings.Contains(name, "--")
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("name %q: want 1-64 of a-z, 0-9 and \"-\", not first or last, never two in a row", abbrev(name))
	}
	return nil
}

// kind names a YAML value's type in a message.
func kind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "nothing"
	}
	return "a number"
}

func abbrev(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
