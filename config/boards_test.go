package config

import (
	"reflect"
	"testing"
	"time"
)

func TestBoardsSection(t *testing.T) {
	c := mustParse(t, "boards: {name: hall, listen: \"0.0.0.0:8765\", url: \"https://hall.local:8765\", discovery: true, timeout: 3s}\n")
	if b := c.Boards; b == nil || b.Name != "hall" || b.Listen != "0.0.0.0:8765" || b.URL != "https://hall.local:8765" || !b.Discovery || b.Timeout != Duration(3*time.Second) {
		t.Fatalf("boards = %+v", c.Boards)
	}
	out, _ := c.Redacted()
	if c2 := mustParse(t, string(out)); !reflect.DeepEqual(c, c2) {
		t.Errorf("round trip:\n%s", out)
	}
	if mustParse(t, "").Boards != nil {
		t.Error("boards on by default")
	}
	if b := mustParse(t, "boards: {}\n").Boards; b == nil || b.Listen != "" || b.Timeout != DefaultBoardsTimeout {
		t.Errorf("boards: {} = %+v, want no listener and the default timeout", b)
	}
	for _, tc := range []struct{ src, at, msg string }{
		{"boards: {listen: 8765}\n", "8765", "is not host:port"},
		{"boards: {listen: \":99999\"}\n", "\":99999\"", "port 99999 is not from 1 to 65535"},
		{"boards: {name: Hall}\n", "Hall", "is not a board's name"},
		{"boards: {name: \"a.b\"}\n", "\"a.b\"", "is not a board's name"},
		{"boards: {listen: \":8765\", url: \"http://x:1\"}\n", "\"http://x:1\"", "is not an https://host:port URL"},
		{"boards: {url: \"https://x:1\"}\n", "\"https://x:1\"", "without boards.listen"},
		{"boards: {discovery: true}\n", "true", "set boards.listen too"},
		{"boards: {timeout: 0s}\n", "0s", "is not from 1s to 5m"},
		{"boards: {listne: \":1\"}\n", "listne", "listne"},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}
