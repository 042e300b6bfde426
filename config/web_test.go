package config

import (
	"os"
	"reflect"
	"regexp"
	"testing"
	"time"
)

func TestWebSection(t *testing.T) {
	c := mustParse(t, "web: {listen: \"0.0.0.0:8080\", names: [clawedge.local], tls_cert: /etc/c.crt, tls_key: /etc/c.key}\npolicy: {channels: {web: {\"gpio/write\": ask}}}\n")
	if c.Web == nil || c.Web.Listen != "0.0.0.0:8080" || !reflect.DeepEqual(c.Web.Names, []string{"clawedge.local"}) || c.Web.TLSKey != "/etc/c.key" {
		t.Fatalf("web = %+v", c.Web)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%s", out)
	}
	if c.Web.SessionIdle != DefaultWebSessionIdle || c.Web.SessionMax != DefaultWebSessionMax {
		t.Errorf("session expiry %v, %v: want the defaults", c.Web.SessionIdle, c.Web.SessionMax)
	}
	c = mustParse(t, "web: {listen: \":80\", session_idle: 12h, session_max: 30d}\n")
	if c.Web.SessionIdle != Duration(12*time.Hour) || c.Web.SessionMax != Duration(30*24*time.Hour) {
		t.Errorf("session expiry %v, %v: want 12h, 30d", c.Web.SessionIdle, c.Web.SessionMax)
	}
	out, _ = c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) || !regexp.MustCompile(`session_max: "?30d`).Match(out) {
		t.Errorf("round trip:\n%s", out)
	}
	if mustParse(t, "").Web != nil {
		t.Error("web on by default")
	}
	for _, tc := range []struct{ src, at, msg string }{
		{"web: {listen: 8080}\n", "8080", "is not host:port"},
		{"web: {listen: \":99999\"}\n", "\":99999\"", "port 99999 is not from 1 to 65535"},
		{"web: {listen: \"example.org:80\"}\n", "\"example", "must be an IP address or localhost"},
		{"web: {}\n", "web", "listen is required"},
		{"web: {listen: \":80\", names: [\"*.local\"]}\n", "[", "is not a host name"},
		{"web: {listen: \":80\", tls_cert: /a}\n", "/a", "go together"},
		{"web: {listen: \":80\", session_idle: 7x}\n", "7x", "expected a duration such as 7d"},
		{"web: {listen: \":80\", session_idle: 30s}\n", "30s", "must be at least 1m"},
		{"web: {listen: \":80\", session_max: 0d}\n", "0d", "must be at least 1m"},
		{"web: {listen: \":80\", session_idle: 30d, session_max: 7d}\n", "30d", "longer than session_max"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

// The yaml of docs/web.md loads, so the guide cannot rot.
func TestWebDocConfigLoads(t *testing.T) {
	doc, err := os.ReadFile("../docs/web.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no yaml block in docs/web.md")
	}
	for _, b := range blocks {
		c, err := Parse(b[1], "web.md", func(string) (string, bool) { return "", false })
		if err != nil || c.Web == nil {
			t.Errorf("%v\n%s", err, b[1])
		}
	}
}
