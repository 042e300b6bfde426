package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/store"
)

// TestAutomationsSurviveKills runs the built binary with an automation from the
// config (every 1s, a 300 ms pulse of led) and one added from the console with
// @auto/add (every 1s, a 300 ms pulse of lamp), restarts it, and SIGKILLs it at
// random moments, many of them in the middle of a pulse. Across all the runs of
// the daemon: both keep firing after every restart, no run (an automation's due
// time) is ever started twice, and every run started and not finished is
// reported as interrupted by the next start (in the log and in its outcome),
// never lost silently. The audit shows the runs with caller auto:<name>.
func TestAutomationsSurviveKills(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the daemon repeatedly (about 15 s)")
	}
	cfgPath, dataDir := writeConfig(t, `console: {stdin: true}
board:
  pins:
    led:  {gpio: 17, mode: out}
    lamp: {gpio: 18, mode: out}
automations:
  blink: {when: {every: 1s}, do: '@gpio/pulse{pin="led";ms=300}'}
`)
	started := regexp.MustCompile(`msg="automation run starting" automation=(\w+) due=(\S+)`)
	finished := regexp.MustCompile(`msg="automation (?:ran|run failed)" automation=(\w+) due=(\S+)`)
	interrupted := regexp.MustCompile(`automation runs interrupted by the last stop, not repeated.*\[([a-z ]+)\]`)

	starts := map[string]int{}        // automation+due -> times started, over all daemons
	unfinished := map[string]string{} // automation -> due, started and not finished by a killed daemon
	reported := 0
	lastKilled := false // the previous daemon was SIGKILLed

	// daemon runs clawedge run, feeding stdin, until its log shows what enough
	// wants (the runs started so far), then signals it (SIGKILL after a random
	// extra wait, or SIGTERM), and accounts for what the log says. Waiting on
	// the log, not on a fixed time, keeps a slow start on a loaded machine from
	// failing the test.
	runDaemon := func(stdin string, enough func(runs map[string]int) bool, sig syscall.Signal) map[string]int {
		cmd := exec.Command(binPath, "run", "--config", cfgPath, "--log-level", "debug")
		cmd.Stdin = strings.NewReader(stdin)
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var stderr bytes.Buffer
		done := make(chan struct{})
		seen := map[string]int{}
		go func() {
			defer close(done)
			sc := bufio.NewScanner(pr)
			signalled := false
			for sc.Scan() {
				stderr.WriteString(sc.Text() + "\n")
				if m := started.FindStringSubmatch(sc.Text()); m != nil {
					seen[m[1]]++
				}
				if !signalled && strings.Contains(sc.Text(), `msg="clawedge ready"`) && sig == syscall.SIGKILL {
					signalled = true
					// Somewhere in the next runs, often in the middle of a pulse.
					time.AfterFunc(time.Duration(300+rand.IntN(1200))*time.Millisecond, func() { cmd.Process.Signal(sig) })
				}
				if !signalled && sig != syscall.SIGKILL && enough(seen) {
					signalled = true
					cmd.Process.Signal(sig)
				}
			}
		}()
		guard := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
		cmd.Wait()
		pw.Close()
		<-done
		if !guard.Stop() {
			t.Fatalf("the daemon did not get there in 30 s; its log:\n%s", stderr.String())
		}
		runs := map[string]int{}
		open := map[string]string{}
		sc := bufio.NewScanner(&stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := interrupted.FindStringSubmatch(line); m != nil {
				for _, name := range strings.Fields(m[1]) {
					// A kill can land after the run was recorded in the store
					// and before its "starting" line left the process: then
					// the report is right and only the log lost the start.
					// After a clean stop there is no such excuse.
					if _, ok := unfinished[name]; !ok && !lastKilled {
						t.Errorf("%s reported interrupted, but no run of it was cut: %s", name, line)
					}
					delete(unfinished, name)
					reported++
				}
			}
			if m := started.FindStringSubmatch(line); m != nil {
				key := m[1] + " " + m[2]
				starts[key]++
				if starts[key] > 1 {
					t.Errorf("run %s started twice", key)
				}
				open[m[1]] = m[2]
				runs[m[1]]++
			}
			if m := finished.FindStringSubmatch(line); m != nil && open[m[1]] == m[2] {
				delete(open, m[1])
			}
		}
		for _, name := range slices.Sorted(maps.Keys(unfinished)) {
			t.Errorf("the cut run of %s (%s) was not reported by the next start", name, unfinished[name])
		}
		unfinished = open
		lastKilled = sig == syscall.SIGKILL
		if sig == syscall.SIGTERM && len(open) > 0 {
			t.Errorf("runs left unfinished by a clean stop: %v", open)
		}
		return runs
	}

	both := func(n int) func(map[string]int) bool {
		return func(r map[string]int) bool { return r["blink"] >= n && r["beat"] >= n }
	}
	runDaemon(`@auto/add{name="beat";every="1s";do="@gpio/pulse{pin=\"lamp\";ms=300}"}`+"\n", both(2), syscall.SIGTERM)
	runDaemon("", both(2), syscall.SIGTERM) // restart: both keep firing
	// The issue asks for 50 kills; a plain `go test` does 6 (about 15 s), the
	// test command sets CLAWEDGE_AUTO_KILLS=50 (about a minute more).
	kills := 6
	if n, err := strconv.Atoi(os.Getenv("CLAWEDGE_AUTO_KILLS")); err == nil && n > 0 {
		kills = n
	}
	for range kills {
		runDaemon("", nil, syscall.SIGKILL)
	}
	runDaemon("", both(1), syscall.SIGTERM) // and after the kills
	t.Logf("%d runs started over %d daemons, %d cut by SIGKILL and reported at the next start", len(starts), kills+3, reported)

	// The audit: every run's call is there with caller auto:<name>; a call cut by
	// a kill is marked interrupted, not left pending.
	st, err := store.Open(dataDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.Tail(10000)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, e := range entries {
		if e.Channel != "auto" {
			continue
		}
		calls[e.Who]++
		if !e.Done {
			t.Errorf("audit entry left pending: %v", e)
		}
	}
	total := 0
	for _, n := range starts {
		total += n
	}
	if calls["auto:blink"] == 0 || calls["auto:beat"] == 0 || calls["auto:blink"]+calls["auto:beat"] > total {
		t.Errorf("audit calls by automation %v, runs started %d", calls, total)
	}
	st.Close()
	out, err := exec.Command(binPath, "auto", "list", "--json", "--config", cfgPath).Output()
	if err != nil {
		t.Fatalf("%v: %s", err, err.(*exec.ExitError).Stderr)
	}
	var list daemon.AutoReply
	if err := json.Unmarshal(out, &list); err != nil || len(list.Automations) != 2 {
		t.Fatalf("auto list: %v %s", err, out)
	}
}
