package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// binPath is the clawedge binary built once for the subprocess tests.
var binPath string

func TestMain(m *testing.M) {
	sandbox.Main() // in-process code that sandboxes a child re-executes this binary as the helper
	dir, err := os.MkdirTemp("", "clawedge-e2e")
	if err != nil {
		panic(err)
	}
	binPath = filepath.Join(dir, "clawedge")
	build := exec.Command("go", "build", "-o", binPath, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building clawedge: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if copyRoot != "" {
		os.RemoveAll(copyRoot)
	}
	os.Exit(code)
}

// ptyPeer reads what the daemon writes on the serial console.
type ptyPeer struct {
	t   *testing.T
	f   *os.File
	buf []byte
	ch  chan []byte
}

func newPTYPeer(t *testing.T, master *os.File) *ptyPeer {
	p := &ptyPeer{t: t, f: master, ch: make(chan []byte, 64)}
	go func() {
		for {
			b := make([]byte, 4096)
			n, err := master.Read(b)
			if n > 0 {
				p.ch <- b[:n]
			}
			if err != nil {
				close(p.ch)
				return
			}
		}
	}()
	return p
}

// until reads until want appears and returns everything up to and including it.
func (p *ptyPeer) until(want string) string {
	p.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if i := bytes.Index(p.buf, []byte(want)); i >= 0 {
			out := string(p.buf[:i+len(want)])
			p.buf = p.buf[i+len(want):]
			return out
		}
		select {
		case b, ok := <-p.ch:
			if !ok {
				p.t.Fatalf("console closed while waiting for %q; got %q", want, p.buf)
			}
			p.buf = append(p.buf, b...)
		case <-deadline:
			p.t.Fatalf("timed out waiting for %q; got %q", want, p.buf)
		}
	}
}

// send types a line and returns the reply (everything until the next prompt).
func (p *ptyPeer) send(line string) string {
	p.t.Helper()
	if _, err := p.f.WriteString(line + "\r"); err != nil {
		p.t.Fatal(err)
	}
	out := p.until("\r\n> ")
	// The console echoes what was typed: drop the echo line.
	_, reply, _ := strings.Cut(out, line+"\r\n")
	return strings.TrimSuffix(reply, "\r\n> ")
}

func writeConfig(t *testing.T, body string) (cfgPath, dataDir string) {
	t.Helper()
	dir := t.TempDir()
	dataDir = filepath.Join(dir, "data")
	cfgPath = filepath.Join(dir, "clawedge.yaml")
	if err := os.WriteFile(cfgPath, []byte("data_dir: "+dataDir+"\n"+body), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath, dataDir
}

// TestRunServesSerialConsole runs the daemon in-process with its console on one
// end of a real PTY pair and plays the person at the terminal on the other.
func TestRunServesSerialConsole(t *testing.T) {
	master, slave, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer slave.Close()

	var board *sim.Sim
	newSim = func() hal.Driver { board = sim.New(); return board }
	defer func() { newSim = func() hal.Driver { return sim.New() } }()

	cfgPath, dataDir := writeConfig(t, fmt.Sprintf("console:\n  stdin: false\n  serial: {device: %s, baud: 115200}\n", slave.Name()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"run", "--config", cfgPath, "--log-level", "warn"})
		done <- root.ExecuteContext(ctx)
	}()

	peer := newPTYPeer(t, master)
	peer.until("ready")
	peer.until("> ")

	if got := peer.send(`@gpio/write{pin="led";value=1}`); !strings.Contains(got, "led = 1") {
		t.Errorf("write reply = %q, want it to say led = 1", got)
	}
	if board.Level(17) != hal.High {
		t.Errorf("GPIO17 is %v after writing led=1, want high", board.Level(17))
	}

	got := peer.send(`@gpio/toggle{pin="led"}->@gpio/read{pin="led"}`)
	if !strings.Contains(got, "gpio/read: led = 0") {
		t.Errorf("chain reply = %q, want the read stage to report led = 0", got)
	}
	if board.Level(17) != hal.Low {
		t.Errorf("GPIO17 is %v after toggle, want low", board.Level(17))
	}

	got = peer.send(`[@gpio/write{pin="relay";value=1},@gpio/read{pin="button"}]`)
	if !strings.Contains(got, "gpio/write: relay = 1") || !strings.Contains(got, "gpio/read: button = 1") {
		t.Errorf("parallel reply = %q, want both results", got)
	}
	if board.Level(22) != hal.Low {
		t.Errorf("relay is active-low: GPIO22 is %v with relay on, want low", board.Level(22))
	}

	got = peer.send(`@gpio/write{pin="led";value=}`)
	if !strings.Contains(got, "error: line 1, column 29") || !strings.Contains(got, "^") {
		t.Errorf("garbage reply = %q, want a line/column error with a caret", got)
	}
	if got := peer.send("@@@ ]]] garbage"); !strings.Contains(got, "error:") {
		t.Errorf("garbage reply = %q, want an error", got)
	}
	if got := peer.send("pins"); !strings.Contains(got, "relay") || !strings.Contains(got, "GPIO") && !strings.Contains(got, "17") {
		t.Errorf("pins reply = %q, want the pin table", got)
	}
	if got := peer.send("what is the weather"); !strings.Contains(got, "No model is configured") {
		t.Errorf("free text reply = %q", got)
	}
	// Still alive after garbage.
	if got := peer.send(`@gpio/read{pin="relay"}`); !strings.Contains(got, "relay = 1") {
		t.Errorf("read after garbage = %q", got)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop after cancel")
	}
	if board.Level(17) != hal.Low || board.Level(22) != hal.High {
		t.Errorf("after shutdown GPIO17=%v GPIO22=%v, want led low and relay off (electrically high)", board.Level(17), board.Level(22))
	}

	s, err := store.Open(dataDir, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries, err := s.Tail(100)
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, e := range entries {
		if !e.Done {
			t.Errorf("audit entry without outcome: %v", e)
		}
		if e.Channel != "console/"+filepath.Base(slave.Name()) {
			t.Errorf("audit channel = %q", e.Channel)
		}
		commands = append(commands, e.Command)
	}
	all := strings.Join(commands, "\n")
	for _, want := range []string{`@gpio/write{pin="led";value=1}`, `@gpio/toggle{pin="led"}`, `@gpio/write{pin="relay";value=1}`, `@gpio/list{}`} {
		if !strings.Contains(all, want) {
			t.Errorf("audit trail lacks %s:\n%s", want, all)
		}
	}
	if strings.Contains(all, "garbage") {
		t.Errorf("a command that did not parse reached the audit trail:\n%s", all)
	}
}

// TestRunBinarySIGTERM runs the real binary with its console on stdin, then
// stops it with SIGTERM: it must exit 0 and leave the audit trail readable.
func TestRunBinarySIGTERM(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, "")
	cmd := exec.Command(binPath, "run", "--config", cfgPath)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	fmt.Fprintln(stdin, `@gpio/write{pin="led";value=1}->@gpio/read{pin="led"}`)
	want := []string{"gpio/write: led = 1", "gpio/read: led = 1"}
	for _, w := range want {
		if !lines.Scan() {
			t.Fatalf("stdout ended early; stderr:\n%s", stderr.String())
		}
		if got := lines.Text(); !strings.Contains(got, w) {
			t.Errorf("line %q, want %q", got, w)
		}
	}

	// While the daemon holds the store and the pins, the CLI goes through its
	// control socket: exec sees the daemon's pin state (a fresh simulated board
	// would read 0), and errors still exit 1.
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); strings.TrimSpace(out) != "led = 1 (high)" {
		t.Errorf("exec through the daemon = %q, want the daemon's led = 1", out)
	}
	out := runCLI(t, 0, "", "exec", "--json", "--config", cfgPath, `@gpio/toggle{pin="led"}`)
	var rep [][]struct {
		Tool   string         `json:"tool"`
		OK     bool           `json:"ok"`
		Fields map[string]any `json:"fields"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep) != 1 || !rep[0][0].OK || rep[0][0].Fields["value"] != 0.0 {
		t.Errorf("exec --json through the daemon: %v\n%s", err, out)
	}
	if out := runCLI(t, 1, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=5}`); !strings.HasPrefix(out, "error: ") || strings.Contains(out, "error: error:") {
		t.Errorf("failing exec through the daemon = %q", out)
	}
	if out := runCLI(t, 0, "@gpio/read{pin=\"led\"}\n", "chat", "--config", cfgPath); !strings.Contains(out, "led = 0") {
		t.Errorf("chat through the daemon = %q, want the toggled led = 0", out)
	}
	if out := runCLI(t, 0, "", "doctor", "--config", cfgPath); !strings.Contains(out, "[ok  ] daemon: running") || !strings.Contains(out, "led     17    out") {
		t.Errorf("doctor with a running daemon:\n%s", out)
	}
	if out := runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "50"); !strings.Contains(out, "control/") || !strings.Contains(out, `@gpio/toggle{pin="led"} -> ok`) {
		t.Errorf("audit through the daemon:\n%s", out)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v; stderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "safe levels") {
		t.Errorf("log does not mention the shutdown:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dataDir, "clawedge.sock")); err == nil {
		t.Error("the control socket outlived the daemon")
	}
	out = runCLI(t, 0, "", "audit", "--config", cfgPath)
	if !strings.Contains(out, `@gpio/write{pin="led";value=1} -> ok`) {
		t.Errorf("audit output:\n%s", out)
	}
}

// runCLI runs the binary and checks its exit status; it returns stdout+stderr.
func runCLI(t *testing.T, wantCode int, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Dir = t.TempDir() // no ./clawedge.yaml to pick up
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+cmd.Dir)
	out, err := cmd.CombinedOutput()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != wantCode {
		t.Fatalf("clawedge %s: exit %d, want %d\n%s", strings.Join(args, " "), code, wantCode, out)
	}
	return string(out)
}

func TestChatPipedAnswersInOrder(t *testing.T) {
	cfgPath, _ := writeConfig(t, "")
	in := "@gpio/write{pin=\"led\";value=1}\nhello there\n\n@gpio/read{pin=\"led\"}\n@gpio/read{pin=\"nope\"}\nstatus"
	out := runCLI(t, 0, in, "chat", "--config", cfgPath)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 5 {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	checks := []string{"led = 1", "No model is configured", "led = 1", "error:", "version:"}
	for i, want := range checks {
		if !strings.Contains(lines[i], want) {
			t.Errorf("reply %d = %q, want %q", i+1, lines[i], want)
		}
	}
	if !strings.Contains(lines[3], `"nope"`) {
		t.Errorf("error for an unknown pin must name it: %q", lines[3])
	}
}

func TestExecAndParse(t *testing.T) {
	cfgPath, _ := writeConfig(t, "")
	out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/write{pin="relay";value=1}->@gpio/read{pin="relay"}`)
	if !strings.Contains(out, "gpio/read: relay = 1") {
		t.Errorf("exec output %q", out)
	}
	out = runCLI(t, 1, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=2}`)
	if !strings.HasPrefix(out, "error: ") || !strings.Contains(out, `"value"`) || !strings.Contains(out, "at most 1") {
		t.Errorf("out-of-range exec output %q", out)
	}
	out = runCLI(t, 1, "", "exec", "--config", cfgPath, `@gpio/write{pin="led";value=1}->@gpio/nope{}`)
	if !strings.Contains(out, "unknown tool") {
		t.Errorf("unknown tool output %q", out)
	}

	out = runCLI(t, 0, "", "parse", "--config", cfgPath, `@gpio/write{pin="led";value=1}->[@gpio/read{pin="led"},@sys/status{}]`)
	var parsed struct {
		Stages []struct {
			Parallel bool `json:"parallel"`
			Calls    []struct {
				Tool   string `json:"tool"`
				Params []struct {
					Key   string         `json:"key"`
					Value map[string]any `json:"value"`
				} `json:"params"`
			} `json:"calls"`
		} `json:"stages"`
	}
	if err := json.Unmarshal([]byte(out), &parsed); err != nil {
		t.Fatalf("parse output is not JSON: %v\n%s", err, out)
	}
	if len(parsed.Stages) != 2 || parsed.Stages[0].Calls[0].Tool != "gpio/write" || !parsed.Stages[1].Parallel || len(parsed.Stages[1].Calls) != 2 {
		t.Errorf("parse structure wrong: %+v", parsed)
	}
	if v := parsed.Stages[0].Calls[0].Params[1].Value; v["type"] != "integer" || v["value"] != 1.0 {
		t.Errorf("value param = %v", v)
	}
	out = runCLI(t, 1, "", "parse", "--config", cfgPath, "@gpio/write{pin=\"led\";\n value=1;;}")
	if !strings.Contains(out, "line 2, column") || !strings.Contains(out, "^") {
		t.Errorf("parse error output %q", out)
	}
	out = runCLI(t, 1, "", "parse", "--config", cfgPath, `@fs/read{path="/etc/passwd"}`)
	if !strings.Contains(out, "unknown namespace") {
		t.Errorf("unknown namespace output %q", out)
	}
}

func TestToolsJSON(t *testing.T) {
	out := runCLI(t, 0, "", "tools", "--json")
	var specs []struct {
		Name   string `json:"name"`
		Doc    string `json:"doc"`
		Params []struct {
			Name     string   `json:"name"`
			Type     string   `json:"type"`
			Required bool     `json:"required"`
			Enum     []string `json:"enum"`
			Min      *float64 `json:"min"`
			Max      *float64 `json:"max"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(out), &specs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The printed shape is exactly what a tools file may contain.
	if read, err := tools.ReadSpecs(strings.NewReader(out)); err != nil || len(read) != len(specs) {
		t.Errorf("tools --json output is not a valid tools file: %v", err)
	}
	byName := map[string]int{}
	for i, s := range specs {
		byName[s.Name] = i
		if s.Doc == "" {
			t.Errorf("%s has no doc", s.Name)
		}
	}
	for _, want := range []string{"gpio/read", "gpio/write", "gpio/toggle", "gpio/pulse", "gpio/wait", "gpio/list", "serial/list", "sys/status", "sys/help"} {
		if _, ok := byName[want]; !ok {
			t.Errorf("tools --json lacks %s", want)
		}
	}
	w := specs[byName["gpio/write"]]
	if len(w.Params) != 2 || w.Params[0].Name != "pin" || strings.Join(w.Params[0].Enum, ",") != "led,relay" || !w.Params[0].Required {
		t.Errorf("gpio/write pin param = %+v (want enum of the outputs led,relay)", w.Params)
	}
	if v := w.Params[1]; v.Type != "integer" || v.Min == nil || *v.Min != 0 || v.Max == nil || *v.Max != 1 {
		t.Errorf("gpio/write value param = %+v", v)
	}
}

func TestConfigCheckAndDoctor(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("board:\n  pins:\n    led: {gpio: 17, mode: out}\n    fan: {gpio: 17, mode: out}\n  colour: red\n"), 0o600)
	out := runCLI(t, 1, "", "config", "check", bad)
	if !strings.Contains(out, "bad.yaml:") || !strings.Contains(out, "colour") || !strings.Contains(out, "17") {
		t.Errorf("config check output:\n%s", out)
	}
	cfgPath, _ := writeConfig(t, "telegram: {token: 123456:SECRET-TOKEN-VALUE}\n")
	out = runCLI(t, 0, "", "config", "check", cfgPath, "--show")
	if strings.Contains(out, "SECRET-TOKEN-VALUE") {
		t.Errorf("config check printed the token:\n%s", out)
	}
	out = runCLI(t, 0, "", "doctor", "--config", cfgPath)
	if strings.Contains(out, "SECRET-TOKEN-VALUE") || !strings.Contains(out, "pin led") || !strings.Contains(out, "store") {
		t.Errorf("doctor output:\n%s", out)
	}
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	os.WriteFile(missing, []byte("console:\n  serial: {device: /dev/does-not-exist, baud: 115200}\n"), 0o600)
	out = runCLI(t, 1, "", "doctor", "--config", missing)
	if !strings.Contains(out, "/dev/does-not-exist") || !strings.Contains(out, "fix:") {
		t.Errorf("doctor on a missing device:\n%s", out)
	}
}

func TestVersion(t *testing.T) {
	if out := runCLI(t, 0, "", "version"); !strings.HasPrefix(out, "clawedge ") {
		t.Errorf("version output %q", out)
	}
}

// waitUntil polls cond every millisecond for up to 30 s (a loaded CI
// machine may take a while) and fails the test naming what it waited for;
// no poll in these tests may wait without end.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited 30 s for %s", what)
		}
	}
}

func waitForSocket(t *testing.T, path string) {
	t.Helper()
	// The file appears at bind, before listen: only a connection that is
	// accepted says the daemon is there. A loaded CI machine may take a while.
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var conn net.Conn
		if conn, err = net.Dial("unix", path); err == nil {
			conn.Close()
			return
		}
	}
	t.Fatalf("nothing accepts on %s: %v", path, err)
}
