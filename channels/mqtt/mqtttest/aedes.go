package mqtttest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Aedes is a running aedes broker (JavaScript, node), the second broker the
// channel is tested against, with mqtt.js as the other clients (aedes.mjs).
// It keeps sessions and retained messages in memory: a Restart loses them,
// as a broker without persistence does.
type Aedes struct {
	URL   string // mqtt://127.0.0.1:port
	port  int
	dir   string // the npm prefix of aedes and mqtt.js
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{}
	subs  int

	pubMu  sync.Mutex
	pubIn  io.WriteCloser // the mqtt.js publisher's stdin (aedes.mjs pub)
	pubOut *bufio.Scanner // its answers
}

// aedesDir is third_party/aedes of this repository, where
// scripts/fetch-aedes.sh installs aedes and mqtt.js.
func aedesDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "third_party", "aedes")
}

// NeedAedes skips the test when node or the npm packages are missing, unless
// CLAWEDGE_REQUIRE_AEDES is set (scripts/test.sh sets it after running
// scripts/fetch-aedes.sh, so CI fails instead).
func NeedAedes(t testing.TB) {
	t.Helper()
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat(filepath.Join(aedesDir(), "node_modules", "aedes", "package.json"))
	if errNode == nil && errPkg == nil {
		return
	}
	if os.Getenv("CLAWEDGE_REQUIRE_AEDES") != "" {
		t.Fatalf("node or aedes is missing (run scripts/fetch-aedes.sh) and CLAWEDGE_REQUIRE_AEDES is set: %v %v", errNode, errPkg)
	}
	t.Skip("node or aedes is missing (run scripts/fetch-aedes.sh)")
}

// StartAedes runs aedes on a free 127.0.0.1 port and stops it when the test
// ends.
func StartAedes(t testing.TB) *Aedes {
	t.Helper()
	NeedAedes(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &Aedes{port: ln.Addr().(*net.TCPAddr).Port, dir: aedesDir()}
	ln.Close()
	a.URL = fmt.Sprintf("mqtt://127.0.0.1:%d", a.port)
	a.start(t)
	t.Cleanup(a.Stop)
	a.startPublisher(t) // node takes seconds to start: it does so while the test goes on
	return a
}

func (a *Aedes) node(args ...string) *exec.Cmd {
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("node", append([]string{filepath.Join(filepath.Dir(file), "aedes.mjs")}, args...)...)
	cmd.Env = append(os.Environ(), "CLAWEDGE_AEDES_DIR="+a.dir)
	return cmd
}

func (a *Aedes) start(t testing.TB) {
	t.Helper()
	a.cmd = a.node("broker", fmt.Sprint(a.port))
	var err error
	if a.stdin, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	a.cmd.Stderr = &stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("starting aedes: %v", err)
	}
	a.done = make(chan struct{})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := sc.Scan() && sc.Text() == "listening"
		ready <- ok
		for sc.Scan() {
		}
		a.cmd.Wait()
		close(a.done)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-a.done
			t.Fatalf("aedes did not start: %s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("aedes does not listen after 30 s: %s", stderr.String())
	}
}

// Stop stops the broker: stdin closed, then a kill after 5 s.
func (a *Aedes) Stop() {
	if a.cmd == nil {
		return
	}
	stopWithin(a.cmd, a.done, func() { a.stdin.Close() })
	a.cmd = nil
}

// Restart stops the broker and starts it again on the same port.
func (a *Aedes) Restart(t testing.TB) {
	t.Helper()
	a.Stop()
	a.start(t)
}

// startPublisher starts the mqtt.js process that sends every Publish; it
// reconnects by itself after a Restart.
func (a *Aedes) startPublisher(t testing.TB) {
	t.Helper()
	cmd := a.node("pub", fmt.Sprint(a.port))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	a.pubIn, a.pubOut = in, bufio.NewScanner(out)
}

// Publish sends one message with mqtt.js at qos and waits for the broker's
// acknowledgement (for QoS 0, for mqtt.js to have written it).
func (a *Aedes) Publish(t testing.TB, topic, payload string, qos int) {
	t.Helper()
	a.pubMu.Lock()
	defer a.pubMu.Unlock()
	if _, err := fmt.Fprintf(a.pubIn, "%s\t%s\t%d\n", topic, payload, qos); err != nil {
		t.Fatalf("mqtt.js publisher: %v", err)
	}
	answer := make(chan string, 1)
	go func() {
		if a.pubOut.Scan() {
			answer <- a.pubOut.Text()
		} else {
			answer <- "error: the publisher ended"
		}
	}()
	select {
	case got := <-answer:
		if got != "ok" {
			t.Fatalf("mqtt.js publish %s: %s", topic, got)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("mqtt.js publish %s: no acknowledgement in 30 s", topic)
	}
}

// Subscribe starts an mqtt.js client subscribed to filter (QoS 1) and
// returns once it is subscribed.
func (a *Aedes) Subscribe(t testing.TB, filter string) *Subscriber {
	t.Helper()
	a.subs++
	cmd := a.node("sub", fmt.Sprint(a.port), fmt.Sprintf("mqtttest-sub-%d", a.subs), filter, "mqtttest/probe")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close() })
	return startSubscriber(t, cmd, func() { a.Publish(t, "mqtttest/probe", "probe", 0) })
}
