package config

import (
	"reflect"
	"testing"
)

func TestUpdateSection(t *testing.T) {
	key := "ed25519:" + "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	c := mustParse(t, "update: {url: \"https://example.org/clawedge/\", key: \""+key+"\"}\n")
	if c.Update == nil || c.Update.Key != key || c.Update.URL != "https://example.org/clawedge/" {
		t.Fatalf("update = %+v", c.Update)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%s", out)
	}
	if mustParse(t, "").Update != nil {
		t.Error("update set by default")
	}
	for _, tc := range []struct{ src, at, msg string }{
		{"update: {key: \"ed25519:AAAA\"}\n", "\"ed25519", "want \"ed25519:<base64 of 32 bytes>\""},
		{"update: {key: \"rsa:" + key[8:] + "\"}\n", "\"rsa", "want \"ed25519:"},
		{"update: {url: \"ftp://x/\"}\n", "\"ftp", "is not an http(s) URL"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
