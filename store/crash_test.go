package store

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test kills a writer with SIGKILL at random moments and checks that everything
// it was told is durable is there. SIGKILL cannot lose data already in the page cache, so
// this proves bbolt's commit protocol and our use of it (no acknowledged id lost, no torn
// file, no reused id, at most the in-flight call pending); surviving a power cut also needs
// the fsync, which only a VM or a real board with its plug pulled can test.

const crashChildEnv = "CLAWEDGE_STORE_CRASH_CHILD_DIR"

// TestCrashHelperProcess is not a test: it is the child that TestCrashSafety starts and
// kills. Each line it prints is printed only after the call returned, i.e. was committed:
//
//	ready
//	I <id> <command>   Intent returned id
//	O <id>             Outcome(id, true, "done <id>") returned
func TestCrashHelperProcess(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("helper process for TestCrashSafety")
	}
	round := os.Getenv(crashChildEnv + "_ROUND")
	s, err := Open(dir, Options{Timeout: 5 * time.Second})
	if err != nil {
		fmt.Fprintln(os.Stderr, "child open:", err)
		os.Exit(2)
	}
	// os.Stdout is unbuffered: each Fprintf is one write(2) into the pipe, so by the time the
	// next call starts the parent can read this line even if we die a microsecond later.
	fmt.Fprintln(os.Stdout, "ready")
	for n := 0; ; n++ {
		cmd := fmt.Sprintf("@test/write{round=%s;n=%d}", round, n)
		id, err := s.Intent("child", "crash", cmd)
		if err != nil {
			fmt.Fprintln(os.Stderr, "child intent:", err)
			os.Exit(3)
		}
		fmt.Fprintf(os.Stdout, "I %d %s\n", id, cmd)
		if err := s.Outcome(id, true, fmt.Sprintf("done %d", id)); err != nil {
			fmt.Fprintln(os.Stderr, "child outcome:", err)
			os.Exit(3)
		}
		fmt.Fprintf(os.Stdout, "O %d\n", id)
	}
}

func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes")
	}
	dir := t.TempDir()
	intents := map[uint64]string{} // every acknowledged intent, across all rounds
	outcomes := map[uint64]bool{}  // every acknowledged outcome
	const rounds = 10
	killedPending := 0
	deadline := time.Now().Add(20 * time.Second)

	for round := range rounds {
		if time.Now().After(deadline) {
			t.Fatalf("crash test too slow: %d rounds done", round)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir, crashChildEnv+"_ROUND="+strconv.Itoa(round))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()

		// Kill at a random moment after the child is writing, not while it starts up.
		ready := false
		for !ready {
			select {
			case l, ok := <-lines:
				if !ok {
					cmd.Wait()
					t.Fatalf("round %d: child exited before ready: %s", round, stderr.String())
				}
				ready = l == "ready"
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("round %d: child not ready: %s", round, stderr.String())
			}
		}
		delay := time.Duration(5+rand.IntN(46)) * time.Millisecond
		time.Sleep(delay)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("round %d: kill: %v", round, err)
		}
		var got int
		for l := range lines { // drains what the child wrote before it died
			f := strings.SplitN(l, " ", 3)
			switch {
			case len(f) == 3 && f[0] == "I":
				id, err := strconv.ParseUint(f[1], 10, 64)
				if err != nil {
					t.Fatalf("round %d: bad line %q", round, l)
				}
				intents[id] = f[2]
				got++
			case len(f) == 2 && f[0] == "O":
				id, err := strconv.ParseUint(f[1], 10, 64)
				if err != nil {
					t.Fatalf("round %d: bad line %q", round, l)
				}
				outcomes[id] = true
			default:
				t.Fatalf("round %d: unexpected child output %q", round, l)
			}
		}
		err = cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("round %d: child ended by %v, not by our SIGKILL: %s", round, err, stderr.String())
		}
		pending := checkAfterCrash(t, dir, round, intents, outcomes)
		t.Logf("round %d: killed after %v, %d intents acknowledged, %d left pending", round, delay, got, pending)
		killedPending += pending
	}
	t.Logf("%d of %d kills landed between an intent and its outcome", killedPending, rounds)
	if len(intents) < rounds {
		t.Errorf("only %d intents acknowledged in %d rounds; the child barely ran", len(intents), rounds)
	}
}

// checkAfterCrash reopens the store the way the daemon does after a crash and checks it
// against what the child acknowledged.
// It returns how many intents were pending (0 or 1).
func checkAfterCrash(t *testing.T, dir string, round int, intents map[uint64]string, outcomes map[uint64]bool) int {
	t.Helper()
	s, err := Open(dir, Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("round %d: reopen after SIGKILL: %v", round, err)
	}
	defer s.Close()

	all, err := s.AuditSince(0, 0)
	if err != nil {
		t.Fatalf("round %d: read audit: %v", round, err)
	}
	byID := make(map[uint64]AuditEntry, len(all))
	var pending []AuditEntry
	for i, e := range all {
		// Ids come from the bucket sequence, committed with the entry: strictly increasing
		// and, since nothing is deleted, without gaps.
		if e.ID != uint64(i+1) {
			t.Fatalf("round %d: entry %d has id %d; ids must be 1,2,3,...", round, i, e.ID)
		}
		byID[e.ID] = e
		if !e.Done {
			pending = append(pending, e)
		}
	}
	for id, command := range intents {
		e, ok := byID[id]
		if !ok {
			t.Fatalf("round %d: acknowledged intent #%d (%s) is lost", round, id, command)
		}
		if e.Command != command {
			t.Fatalf("round %d: #%d command %q, child was told %q", round, id, e.Command, command)
		}
	}
	for id := range outcomes {
		if e := byID[id]; !e.Done || !e.OK || e.Detail != fmt.Sprintf("done %d", id) || e.Interrupted {
			t.Fatalf("round %d: acknowledged outcome of #%d is lost: %+v", round, id, e)
		}
	}

	// The child does one call at a time, so at most the last intent can be unfinished.
	if len(pending) > 1 || (len(pending) == 1 && pending[0].ID != uint64(len(all))) {
		t.Fatalf("round %d: pending entries %v; want at most the last one", round, pending)
	}
	n, err := s.Interrupted()
	if err != nil || n != len(pending) {
		t.Fatalf("round %d: Interrupted() = %d, %v; want %d", round, n, err, len(pending))
	}
	if len(pending) == 1 {
		e, _ := s.Tail(1)
		if !e[0].Done || !e[0].Interrupted || e[0].OK || e[0].Detail != InterruptedDetail {
			t.Fatalf("round %d: after Interrupted the last entry is %+v", round, e[0])
		}
		if _, acked := outcomes[e[0].ID]; acked {
			t.Fatalf("round %d: #%d had an acknowledged outcome but was pending", round, e[0].ID)
		}
	}
	if st, err := s.Stats(); err != nil || st.AuditPending != 0 || st.AuditEntries != len(all) {
		t.Fatalf("round %d: Stats = %+v, %v", round, st, err)
	}
	return len(pending)
}
