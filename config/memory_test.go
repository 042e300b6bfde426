package config

import (
	"reflect"
	"testing"
)

func TestMemorySection(t *testing.T) {
	if m := mustParse(t, "").Memory; m != defaultMemory() || !m.Enabled {
		t.Fatalf("default memory = %+v", m)
	}
	c := mustParse(t, "memory: {enabled: false, recall_tokens: 300, local_recall_tokens: 0, persona_tokens: 200, max_entries: 500, max_bytes: 65536}\n")
	want := Memory{RecallTokens: 300, PersonaTokens: 200, MaxEntries: 500, MaxBytes: 65536}
	if c.Memory != want {
		t.Fatalf("memory = %+v, want %+v", c.Memory, want)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%s", out)
	}
	for _, tc := range []struct{ src, at, msg string }{
		{"memory: {max_entries: 0}\n", "0", "memory.max_entries"},
		{"memory: {max_bytes: 100}\n", "100", "memory.max_bytes"},
		{"memory: {enabled: yes please}\n", "yes", "true or false"},
		{"memory: {recal_tokens: 5}\n", "recal_tokens", "unknown key"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
