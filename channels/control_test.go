package channels

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// userEcho records who the socket said was asking.
type userEcho struct{ users chan string }

func (u userEcho) Respond(_ context.Context, m Message) Response {
	u.users <- m.Channel + " " + m.User
	return Response{Text: "got " + m.Text}
}

func TestControlSocket(t *testing.T) {
	d, led := newDispatcher(t)
	path := filepath.Join(t.TempDir(), ControlSocketName)
	os.WriteFile(path, []byte("stale"), 0o600) // left by a daemon that died
	s := &ControlSocket{Handler: d, Path: path}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want 0600", fi.Mode().Perm())
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	c, err := DialControl(path, "alice")
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Send(`@gpio/write{pin="led";value=1}`)
	if err != nil || r.Failed || r.Text != "led = 1" || led.get() != 1 {
		t.Fatalf("reply %+v, %v", r, err)
	}
	var rep [][]map[string]any
	if err := json.Unmarshal(r.Report, &rep); err != nil || rep[0][0]["tool"] != "gpio/write" {
		t.Errorf("report %s: %v", r.Report, err)
	}
	if r, _ := c.Send(`@gpio/write{pin="led";value=3}`); !r.Failed || !strings.Contains(r.Text, "at most 1") {
		t.Errorf("invalid call reply %+v", r)
	}
	// A client that is not ours: garbage, then a valid request on the same connection.
	raw, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(raw, "{not json\n{\"text\":\"status\"}\n")
	dec := json.NewDecoder(raw)
	var bad, good ControlReply
	if err := dec.Decode(&bad); err != nil || !bad.Failed || !strings.Contains(bad.Text, "bad control request") {
		t.Errorf("garbage reply %+v, %v", bad, err)
	}
	if err := dec.Decode(&good); err != nil || good.Text != "uptime: 1s" {
		t.Errorf("reply after garbage %+v, %v", good, err)
	}
	raw.Close()

	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not stop")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Error("socket file left behind after shutdown")
	}
	if _, err := c.Send("status"); err == nil {
		t.Error("a client of a stopped daemon got an answer")
	}
	if _, err := DialControl(path, "alice"); err == nil {
		t.Error("dialled a stopped daemon")
	}
}

func TestControlSocketRecordsPeerUID(t *testing.T) {
	users := make(chan string, 1)
	path := filepath.Join(t.TempDir(), ControlSocketName)
	s := &ControlSocket{Handler: userEcho{users}, Path: path}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Serve(ctx, ln)
	c, err := DialControl(path, "mallory")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r := c.Respond(ctx, Message{Text: "hi"}); r.Text != "got hi" {
		t.Errorf("reply %+v", r)
	}
	if got, want := <-users, fmt.Sprintf("control mallory (uid %d)", os.Getuid()); got != want {
		t.Errorf("user %q, want %q (the uid comes from the kernel)", got, want)
	}
}
