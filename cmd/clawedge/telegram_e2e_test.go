package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/store"
)

// lockedBuffer collects a child's output across restarts.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// daemon is a `clawedge run` child.
type daemonProc struct {
	cmd  *exec.Cmd
	done chan error
}

func startDaemon(t *testing.T, cfgPath string, out *lockedBuffer, env ...string) *daemonProc {
	t.Helper()
	cmd := exec.Command(binPath, "run", "--config", cfgPath)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = t.TempDir()
	cmd.Env = append(append(os.Environ(), "XDG_CONFIG_HOME="+cmd.Dir), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d := &daemonProc{cmd: cmd, done: make(chan error, 1)}
	go func() { d.done <- cmd.Wait() }()
	t.Cleanup(func() { d.cmd.Process.Kill(); <-d.done; d.done <- nil })
	return d
}

func (d *daemonProc) kill() {
	d.cmd.Process.Signal(syscall.SIGKILL)
	err := <-d.done
	d.done <- err
}

func (d *daemonProc) term(t *testing.T) error {
	t.Helper()
	d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(15 * time.Second):
		t.Fatal("the daemon did not stop after SIGTERM")
	}
	return nil
}

func telegramConfig(srv *telegramtest.Server, users []int64, extra string) string {
	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = strconv.FormatInt(u, 10)
	}
	return fmt.Sprintf("console: {stdin: false}\ntelegram:\n  token: %q\n  api_url: %s\n  allow_users: [%s]\n%s",
		srv.Token, srv.URL, strings.Join(ids, ", "), extra)
}

func waitSent(t *testing.T, srv *telegramtest.Server, chat int64, n int, out *lockedBuffer) string {
	t.Helper()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		got = srv.Sent(chat)
		if len(got) >= n {
			return got[n-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no reply %d to %d; sent %q\nlog:\n%s", n, chat, got, out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var mdEscape = regexp.MustCompile(`\\(.)`)

func unescape(s string) string { return mdEscape.ReplaceAllString(s, "$1") }

// TestTelegramDaemon runs the real binary against the fake Bot API: commands, pairing
// with the code from the log, doctor, and the token absent from every output.
func TestTelegramDaemon(t *testing.T) {
	srv := telegramtest.New(t)
	owner, stranger := int64(42), int64(4242)
	cfgPath, dataDir := writeConfig(t, telegramConfig(srv, []int64{owner}, "  pairing: true\n"))
	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)

	srv.Text(telegramtest.User{ID: owner, FirstName: "O", Username: "olga"}, nil, `@gpio/write{pin="led";value=1}->@gpio/read{pin="led"}`)
	if got := unescape(waitSent(t, srv, owner, 1, out)); !strings.Contains(got, "gpio/read: led = 1") {
		t.Errorf("reply = %q", got)
	}
	// A stranger gets nothing, until pairing.
	s := telegramtest.User{ID: stranger, FirstName: "S"}
	srv.Text(s, nil, "pins")
	srv.Text(s, nil, "/pair")
	if got := waitSent(t, srv, stranger, 1, out); !strings.Contains(got, "pairing code") {
		t.Errorf("/pair reply = %q", got)
	}
	var code string
	for deadline := time.Now().Add(30 * time.Second); code == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`code=(\d{6})`).FindStringSubmatch(out.String()); m != nil {
			code = m[1]
		}
	}
	if code == "" {
		t.Fatalf("no pairing code in the log:\n%s", out)
	}
	srv.Text(s, nil, "/pair "+code)
	if got := waitSent(t, srv, stranger, 2, out); !strings.Contains(got, "Paired") {
		t.Errorf("/pair CODE reply = %q", got)
	}
	srv.Text(s, nil, `@gpio/read{pin="led"}`)
	if got := unescape(waitSent(t, srv, stranger, 3, out)); !strings.Contains(got, "led = 1") {
		t.Errorf("paired user's reply = %q", got)
	}
	if n := len(srv.Sent(stranger)); n != 3 {
		t.Errorf("stranger got %d messages, want 3 (nothing for 'pins' before pairing)", n)
	}

	doctor := runCLI(t, 0, "", "doctor", "--config", cfgPath)
	if !strings.Contains(doctor, "[ok  ] telegram: bot @clawedge_bot reachable") {
		t.Errorf("doctor:\n%s", doctor)
	}
	shown := runCLI(t, 0, "", "config", "check", cfgPath, "--show")
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath, "-n", "50")
	if !strings.Contains(audit, "telegram/telegram:42 (@olga)") || !strings.Contains(audit, "telegram/telegram:4242") {
		t.Errorf("audit does not name the Telegram users:\n%s", audit)
	}
	if err := d.term(t); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, out)
	}
	secret := strings.Split(srv.Token, ":")[1]
	for name, text := range map[string]string{"log": out.String(), "doctor": doctor, "config --show": shown, "audit": audit} {
		if strings.Contains(text, secret) {
			t.Errorf("the token appears in the %s", name)
		}
	}
	raw, _ := os.ReadFile(filepath.Join(dataDir, store.FileName))
	if bytes.Contains(raw, []byte(secret)) {
		t.Error("the token is in the store file")
	}
}

// A token Telegram refuses stops the daemon with a clear error that does not show it.
func TestTelegramRefusedToken(t *testing.T) {
	srv := telegramtest.New(t)
	srv.Token = "1:" + strings.Repeat("Z", 35) // the server expects another token than the config's
	cfgPath, _ := writeConfig(t, fmt.Sprintf("console: {stdin: false}\ntelegram:\n  token: %q\n  api_url: %s\n  allow_users: [1]\n", telegramtest.Token, srv.URL))
	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	select {
	case err := <-d.done:
		d.done <- err
		if err == nil {
			t.Fatal("run exited 0 with a refused token")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run kept going with a refused token")
	}
	if !strings.Contains(out.String(), "bot token was refused") || strings.Contains(out.String(), strings.Split(telegramtest.Token, ":")[1]) {
		t.Errorf("output:\n%s", out)
	}
	doctor := runCLI(t, 1, "", "doctor", "--config", cfgPath)
	if !strings.Contains(doctor, "[FAIL] telegram: Telegram refused the token") || strings.Contains(doctor, strings.Split(telegramtest.Token, ":")[1]) {
		t.Errorf("doctor:\n%s", doctor)
	}
}

// TestTelegramNotifiesPinEdges runs the daemon in-process, so that the test can press the
// simulated button, and checks the notification reaches the configured user.
func TestTelegramNotifiesPinEdges(t *testing.T) {
	srv := telegramtest.New(t)
	var board *sim.Sim
	var mu sync.Mutex
	newSim = func() hal.Driver { mu.Lock(); defer mu.Unlock(); board = sim.New(); return board }
	defer func() { newSim = func() hal.Driver { return sim.New() } }()
	cfgPath, _ := writeConfig(t, telegramConfig(srv, []int64{42, 43}, "  notify:\n    - {pin: button, edge: falling, users: [43], text: button pressed}\n"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"run", "--config", cfgPath, "--log-level", "warn"})
		done <- root.ExecuteContext(ctx)
	}()
	out := &lockedBuffer{}
	srv.Text(telegramtest.User{ID: 42, FirstName: "O"}, nil, "/pins") // the daemon is up once it answers
	waitSent(t, srv, 42, 1, out)
	mu.Lock()
	b := board
	mu.Unlock()
	waitUntil(t, "the daemon to watch the button (GPIO27)", func() bool { return b.Waiters(27) > 0 })
	b.Drive(27, hal.Low) // pressed: the pull-up input falls
	if got := waitSent(t, srv, 43, 1, out); !regexp.MustCompile(`^button pressed at \d\d:\d\d$`).MatchString(got) {
		t.Errorf("notification = %q", got)
	}
	if n := len(srv.Sent(42)); n != 1 {
		t.Errorf("user 42 got %d messages; notifications go to users: [43] only", n)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("run did not stop")
	}
}

// TestTelegramCrashExactlyOnce kills `clawedge run` with SIGKILL at random moments while
// 200 commands flow, restarts it each time, and then checks the audit trail: every
// command's toggle was recorded exactly once (done, or marked interrupted), none was
// lost and none ran twice; and every sender got an answer.
func TestTelegramCrashExactlyOnce(t *testing.T) {
	const n = 200
	srv := telegramtest.New(t)
	users := make([]int64, n)
	for i := range users {
		users[i] = int64(1001 + i)
	}
	cfgPath, dataDir := writeConfig(t, telegramConfig(srv, users, ""))
	for _, u := range users {
		srv.Text(telegramtest.User{ID: u, FirstName: "u"}, nil, `@gpio/toggle{pin="led"}`)
	}
	out := &lockedBuffer{}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	kills := 0
	allAnswered := func() bool {
		for _, u := range users {
			if len(srv.Sent(u)) == 0 {
				return false
			}
		}
		return true
	}
	start := time.Now()
	for kills < 40 && time.Since(start) < 30*time.Second {
		d := startDaemon(t, cfgPath, out)
		time.Sleep(time.Duration(20+rng.IntN(250)) * time.Millisecond)
		d.kill()
		kills++
		if allAnswered() && kills >= 5 {
			break
		}
	}
	d := startDaemon(t, cfgPath, out)
	deadline := time.Now().Add(30 * time.Second)
	for !allAnswered() || srv.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("not every command was answered after %d kills\n%s", kills, tail(out.String(), 3000))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.term(t); err != nil {
		t.Fatalf("final stop: %v", err)
	}
	st, err := store.Open(dataDir, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.AuditSince(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	interrupted := 0
	for _, e := range entries {
		if e.Channel != "telegram" || e.Command != `@gpio/toggle{pin="led"}` {
			t.Errorf("unexpected audit entry %s", e)
			continue
		}
		if !e.Done {
			t.Errorf("entry without an outcome after a clean stop: %s", e)
		}
		if e.Interrupted {
			interrupted++
		}
		per[e.Who]++
	}
	for _, u := range users {
		if c := per[fmt.Sprintf("telegram:%d", u)]; c != 1 {
			t.Errorf("user %d's toggle is in the audit trail %d times, want exactly 1", u, c)
		}
	}
	items, _ := st.QueueItems("telegram", 0)
	if len(items) != 0 {
		t.Errorf("%d items left in the inbox", len(items))
	}
	t.Logf("%d kills, %d audit entries, %d marked interrupted, %d replies", kills, len(entries), interrupted, srv.Count("sendMessage"))
}

// TestTelegramSoak sends 10,000 updates through the fake server to the binary: no loss,
// no duplicate, and the daemon's RSS levels off.
func TestTelegramSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak")
	}
	t.Parallel() // beside the endurance test's two minutes of waiting
	const users, per = 100, 100
	srv := telegramtest.New(t)
	ids := make([]int64, users)
	for i := range ids {
		ids[i] = int64(5001 + i)
	}
	body := telegramConfig(srv, ids, "")
	cfgPath, _ := writeConfig(t, body)
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		// The soak is about loss, duplicates and memory, not the disk: keep the store
		// in memory so that 10,000 fsyncs do not dominate the run.
		shm, err := os.MkdirTemp("/dev/shm", "clawedge-soak")
		if err == nil {
			t.Cleanup(func() { os.RemoveAll(shm) })
			os.WriteFile(cfgPath, []byte("data_dir: "+shm+"\n"+body), 0o600)
		}
	}
	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	var rss []int
	total := users * per
	for round := range per {
		for _, u := range ids {
			srv.Text(telegramtest.User{ID: u, FirstName: "u"}, nil, fmt.Sprintf("message %d", round))
		}
		if (round+1)%10 == 0 {
			want := (round + 1) * users
			deadline := time.Now().Add(30 * time.Second)
			for srv.Count("sendMessage") < want {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d replies\n%s", srv.Count("sendMessage"), want, tail(out.String(), 2000))
				}
				time.Sleep(5 * time.Millisecond)
			}
			rss = append(rss, vmRSS(t, d.cmd.Process.Pid))
		}
	}
	for _, u := range ids {
		if n := len(srv.Sent(u)); n != per {
			t.Errorf("user %d got %d replies, want %d", u, n, per)
		}
	}
	if n := srv.Count("sendMessage"); n != total {
		t.Errorf("%d replies for %d messages", n, total)
	}
	if err := d.term(t); err != nil {
		t.Errorf("stop: %v", err)
	}
	// Plateau: the second half of the run may not grow past the first half's peak by
	// more than a little (GC timing, a bbolt page).
	peak1, peak2 := 0, 0
	for i, r := range rss {
		if i < len(rss)/2 {
			peak1 = max(peak1, r)
		} else {
			peak2 = max(peak2, r)
		}
	}
	t.Logf("VmRSS every 1,000 updates (KiB): %v", rss)
	if peak2 > peak1+peak1/5+1024 {
		t.Errorf("RSS keeps growing: first half peak %d KiB, second half %d KiB", peak1, peak2)
	}
}

func vmRSS(t *testing.T, pid int) int {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
