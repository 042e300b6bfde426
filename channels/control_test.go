package channels

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := dialControl(t, serveControl(t, ctx, userEcho{users}), "mallory")
	if r := c.Respond(ctx, Message{Text: "hi"}); r.Text != "got hi" {
		t.Errorf("reply %+v", r)
	}
	// The client said "mallory": it names no one; who asks is the kernel's uid.
	if got, want := <-users, fmt.Sprintf("control uid:%d", os.Getuid()); got != want {
		t.Errorf("user %q, want %q (the uid comes from the kernel)", got, want)
	}
}

// waitTool blocks until its call is cancelled, like a gpio/wait of an hour.
type waitTool struct{ started chan struct{} }

func (w waitTool) Spec() grammar.ToolSpec { return grammar.ToolSpec{Name: "gpio/wait", Doc: "wait"} }
func (w waitTool) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	w.started <- struct{}{}
	<-ctx.Done()
	return tools.Result{}, ctx.Err()
}

// outcomeAudit keeps the outcomes the runner records.
type outcomeAudit struct{ outcomes chan string }

func (outcomeAudit) Intent(who, channel, command string) (uint64, error) { return 1, nil }
func (a outcomeAudit) Outcome(id uint64, ok bool, detail string) error {
	a.outcomes <- detail
	return nil
}

func serveWaitTool(t *testing.T, ctx context.Context) (path string, started chan struct{}, outcomes chan string) {
	t.Helper()
	started, outcomes = make(chan struct{}, 1), make(chan string, 1)
	reg := tools.NewRegistry()
	if err := reg.Register(waitTool{started}); err != nil {
		t.Fatal(err)
	}
	d := &Dispatcher{Runner: &tools.Runner{Registry: reg, Audit: outcomeAudit{outcomes}}}
	return serveControl(t, ctx, d), started, outcomes
}

// serveControl serves h on a control socket in a fresh folder until ctx ends,
// and returns the socket's path.
func serveControl(t *testing.T, ctx context.Context, h Handler) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), ControlSocketName)
	s := &ControlSocket{Handler: h, Path: path}
	ln, err := s.Listen()
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve(ctx, ln)
	return path
}

// dialControl connects to the control socket at path as user until the test ends.
func dialControl(t *testing.T, path, user string) *ControlClient {
	t.Helper()
	c, err := DialControl(path, user)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// A client that goes away (killed, Ctrl-C) cancels the call it was waiting for,
// and the outcome says why in words.
func TestControlClientGoneCancelsCall(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path, started, outcomes := serveWaitTool(t, ctx)
	c, err := DialControl(path, "alice")
	if err != nil {
		t.Fatal(err)
	}
	go c.Send(`@gpio/wait{}`)
	<-started
	c.Close()
	select {
	case got := <-outcomes:
		if !strings.HasPrefix(got, "gpio/wait: cancelled: the client went away (") {
			t.Errorf("outcome %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call went on after its client went away")
	}
}

// A stop with a cause (the daemon's "clawedge stopping") is what the outcome says.
func TestControlStopCancelsCallWithCause(t *testing.T) {
	stopping := errors.New("cancelled: clawedge stopping")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	path, started, outcomes := serveWaitTool(t, ctx)
	c, err := DialControl(path, "alice")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go c.Send(`@gpio/wait{}`)
	<-started
	cancel(stopping)
	select {
	case got := <-outcomes:
		if !strings.HasPrefix(got, "gpio/wait: cancelled: clawedge stopping (") {
			t.Errorf("outcome %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call went on after the stop")
	}
}

// An over-long line gets the same error as without a daemon (the dispatcher's),
// and a request too long to read at all gets an error, not a reset connection.
func TestControlLongLines(t *testing.T) {
	d, _ := newDispatcher(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	path := serveControl(t, ctx, d)
	c := dialControl(t, path, "alice")
	// The longest line `clawedge exec` can be given (the kernel's 128 KiB per argument).
	line := `@gpio/write{pin="` + strings.Repeat("a", 128<<10-40) + `";value=1}`
	want := d.Respond(ctx, Message{Text: line}).Text
	r, err := c.Send(line)
	if err != nil || !r.Failed || r.Text != want {
		t.Errorf("over-long line through the socket: %v, %.200q, want %.200q", err, r.Text, want)
	}
	raw, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	go fmt.Fprintf(raw, "{\"text\":\"%s\"}\n{\"text\":\"status\"}\n", strings.Repeat("b", MaxControlRequest))
	dec := json.NewDecoder(raw)
	var big, next ControlReply
	if err := dec.Decode(&big); err != nil || !big.Failed || !strings.Contains(big.Text, fmt.Sprintf("at most %d bytes", MaxControlRequest)) {
		t.Errorf("request over the limit: %+v, %v", big, err)
	}
	if err := dec.Decode(&next); err != nil || next.Text != "uptime: 1s" {
		t.Errorf("the connection did not go on after it: %+v, %v", next, err)
	}
}

func TestSocketPeerCheck(t *testing.T) {
	cases := []struct {
		p    SocketPeer
		want string // "" = trusted
	}{
		{SocketPeer{Peer: 1000, SocketOwner: 1000, DirOwner: 1000, Self: 1000}, ""},
		{SocketPeer{Peer: 0, SocketOwner: 0, DirOwner: 0, Self: 1000}, ""},
		{SocketPeer{Peer: 999, SocketOwner: 999, DirOwner: 999, Self: 0}, ""}, // sudo clawedge exec
		{SocketPeer{Peer: 1001, SocketOwner: 1001, DirOwner: 1000, Self: 1000}, "answered by uid 1001, which is neither this user (uid 1000) nor root"},
		{SocketPeer{Peer: 1001, SocketOwner: 1001, DirOwner: 0, Self: 0}, "neither this user (uid 0) nor root"},
		{SocketPeer{Peer: 1001, SocketOwner: 1000, DirOwner: 1000, Self: 1000}, "answered by uid 1001 but the socket file belongs to uid 1000"},
	}
	for _, c := range cases {
		err := c.p.Check()
		if c.want == "" && err != nil || c.want != "" && (!errors.Is(err, ErrUntrustedPeer) || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

// TestHelperImpostor is not a test: run with CLAWEDGE_IMPOSTOR=socket,log it is
// another user's process that took over a daemon's socket and logs what it hears.
func TestHelperImpostor(t *testing.T) {
	spec := os.Getenv("CLAWEDGE_IMPOSTOR")
	if spec == "" {
		t.Skip("helper process")
	}
	sock, logPath, _ := strings.Cut(spec, ",")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(sock, 0o666)
	fmt.Println("listening")
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		b, _ := io.ReadAll(conn)
		os.WriteFile(logPath, b, 0o666)
		conn.Close()
	}
}

// Another user who replaced the daemon's socket in a data_dir anyone can write
// gets nothing: the client checks who answers before it sends.
func TestDialControlRefusesAnotherUsersSocket(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("running a process as another user needs root")
	}
	dir, err := os.MkdirTemp("", "clawedge-impostor")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777) // the mistake that lets another user in
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "impostor")
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	sock, logPath := filepath.Join(dir, ControlSocketName), filepath.Join(dir, "heard")
	cmd := exec.Command(bin, "-test.run=^TestHelperImpostor$")
	cmd.Env = append(os.Environ(), "CLAWEDGE_IMPOSTOR="+sock+","+logPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "listening\n" {
		t.Fatalf("impostor: %q, %v", line, err)
	}
	c, err := DialControl(sock, "alice")
	if err == nil {
		c.Send(`@gpio/write{pin="door";value=1}`)
		c.Close()
		t.Fatal("the client talked to another user's socket")
	}
	if !errors.Is(err, ErrUntrustedPeer) || !strings.Contains(err.Error(), "answered by uid 65534") {
		t.Errorf("error %v", err)
	}
}
