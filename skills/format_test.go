package skills

import (
	"strings"
	"testing"
)

func TestParseSkillMD(t *testing.T) {
	m, body, err := ParseSkillMD([]byte("---\r\nname: pdf-tools\r\ndescription: >\r\n  Fill PDF forms.\r\nmetadata:\r\n  version: 1.0\r\n  author: x\r\nallowed-tools: Bash(git:*) Read\r\nextra: ignored\r\n---\r\n\r\n# Steps\r\nOne.\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "pdf-tools" || m.Description != "Fill PDF forms." || m.Metadata["version"] != "1" && m.Metadata["version"] != "1.0" ||
		len(m.AllowedTools) != 2 || body != "# Steps\nOne.\n" {
		t.Fatalf("got %+v, body %q", m, body)
	}
	for _, c := range []struct{ src, want string }{
		{"name: x\n", "line 1: want \"---\""},
		{"---\nname: x\ndescription: y\n", "no closing"},
		{"---\ndescription: y\n---\n", "name is missing"},
		{"---\nname: Bad_Name\ndescription: y\n---\n", "want 1-64 of a-z"},
		{"---\nname: a--b\ndescription: y\n---\n", "never two in a row"},
		{"---\nname: ok\n---\n", "description is missing"},
		{"---\nname: [a]\ndescription: y\n---\n", "name must be a string, found a list"},
		{"---\nname: ok\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", "more than 1024"},
		{"---\nname: ok\ndescription: &a y\nlicense: *a\n---\n", "anchors and aliases"},
		{"---\nname: ok\ndescription: y\nmetadata: [1]\n---\n", "metadata must be a mapping"},
		{"---\nname: ok\ndescription: y\nallowed-tools: {a: 1}\n---\n", "allowed-tools must be"},
		{"---\nname: ok\ndescription: y\n---\n" + strings.Repeat("x", MaxSkillMDBytes), "more than"},
		{"---\nname: ok\n\xff\n---\n", "not UTF-8"},
	} {
		if _, _, err := ParseSkillMD([]byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60q: error %v, want %q", c.src, err, c.want)
		}
	}
}

const goodTools = `tools:
  - name: read_temp
    doc: Read a probe.
    params:
      - {name: sensor, type: string, required: true, enum: [indoor, outdoor], doc: which probe}
      - {name: digits, type: integer, min: 0, max: 3, default: 1}
    run: [scripts/read.sh, --sensor, "{sensor}", "{digits}"]
    read: [/sys/bus/w1/devices]
    network: false
    timeout: 2s
    x-other-runtime: kept out
`

func TestParseTools(t *testing.T) {
	ds, err := ParseTools("w1", []byte(goodTools))
	if err != nil {
		t.Fatal(err)
	}
	d := ds[0]
	if d.Name != "read_temp" || len(d.Params) != 2 || d.Params[0].Enum[1] != "outdoor" || d.Timeout.Seconds() != 2 ||
		d.Read[0] != "/sys/bus/w1/devices" || d.Network || d.Spec("w1").Name != "w1/read_temp" {
		t.Fatalf("got %+v", d)
	}
	bad := func(from, to string) string { return strings.Replace(goodTools, from, to, 1) }
	for _, c := range []struct{ src, want string }{
		{bad("required: true", "requird: true"), `unknown field "requird"`},
		{bad(`"{sensor}"`, `"--s={sensor}"`), "a parameter is a whole argument"},
		{bad(`"{digits}"`, `"{digit}"`), "names no parameter"},
		{bad(`, "{digits}"]`, `]`), "parameter digits is not used in run"},
		{bad("scripts/read.sh", "../read.sh"), "inside the skill folder"},
		{bad("scripts/read.sh", "/bin/sh"), "inside the skill folder"},
		{bad("[/sys/bus/w1/devices]", "[sys/bus]"), "absolute, clean path"},
		{bad("[/sys/bus/w1/devices]", "[/sys/../etc]"), "absolute, clean path"},
		{bad("timeout: 2s", "timeout: 2h"), "at most 10m"},
		{bad("network: false", "network: yes please"), "network must be true or false"},
		{bad("type: integer", "type: array"), "items"},
		{bad("name: read_temp", "name: read/temp"), "tool name"},
		{goodTools + "  - name: read_temp\n    run: [scripts/read.sh]\n", "declared twice"},
		{"tools: {a: 1}\n", "want a list"},
	} {
		if _, err := ParseTools("w1", []byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\nerror %v, want %q", c.src, err, c.want)
		}
	}
}

func TestIndexBudget(t *testing.T) {
	var list []*Skill
	for _, n := range []string{"alpha", "beta", "gamma", "delta", "epsilon"} {
		list = append(list, &Skill{Meta: Meta{Name: n, Description: strings.Repeat(n+" does things. ", 40)}})
	}
	idx := Index(list, 400)
	if len(idx) > 400 {
		t.Fatalf("index of %d bytes, budget 400:\n%s", len(idx), idx)
	}
	for _, n := range []string{"alpha", "epsilon"} {
		if !strings.Contains(idx, "- "+n) && !strings.Contains(idx, n) {
			t.Errorf("index lacks %s:\n%s", n, idx)
		}
	}
	if full := Index(list[:1], 5000); !strings.Contains(full, strings.TrimSpace(list[0].Meta.Description)) {
		t.Errorf("a description that fits is shortened:\n%s", full)
	}
	if tiny := Index(list, 200); !strings.Contains(tiny, "- also: ") || !strings.Contains(tiny, "epsilon") || len(tiny) > 200 {
		t.Errorf("a tiny budget: the skills left out are not named:\n%s", tiny)
	}
	if Index(nil, 100) != "" {
		t.Error("no skills, yet an index")
	}
}
