package config

import (
	"reflect"
	"testing"
)

func TestMetricsSection(t *testing.T) {
	c := mustParse(t, "metrics: {listen: \"127.0.0.1:9464\"}\n")
	if c.Metrics == nil || c.Metrics.Listen != "127.0.0.1:9464" {
		t.Fatalf("metrics = %+v", c.Metrics)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%s", out)
	}
	if mustParse(t, "").Metrics != nil {
		t.Error("metrics on by default")
	}
	for _, tc := range []struct{ src, at, msg string }{
		{"metrics: {listen: 9464}\n", "9464", "is not host:port"},
		{"metrics: {listen: \":99999\"}\n", "\":99999\"", "port 99999 is not from 1 to 65535"},
		{"metrics: {listen: \"example.org:9464\"}\n", "\"example", "must be an IP address or localhost"},
		{"metrics: {}\n", "metrics", "listen is required"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
