package sandbox

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Twenty processes of nobody beside a hundred runs under nproc 16 (the
// exec config's default): every run forks, because a run's processes are
// counted under a uid no one else has. With the runs as nobody, as before,
// each of them failed "resource temporarily unavailable". Runs at once hold
// different uids, all from the range, none nobody's.
func TestRunsHaveAnIdentityOfTheirOwn(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a daemon that is not root runs its children as itself")
	}
	var others []*exec.Cmd
	defer func() {
		for _, c := range others {
			c.Process.Kill()
			c.Wait()
		}
	}()
	for range 20 {
		c := exec.Command("/bin/sleep", "1000")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		others = append(others, c)
	}
	// Each run forks two children and waits for them, and reports its uid.
	s := Spec{Program: "/bin/sh", Args: []string{"-c", "/bin/sleep 0.05 & /bin/true & wait && /usr/bin/id -u"},
		Read: []string{"/usr/bin"}, Limits: Limits{NProc: 16}}
	var mu sync.Mutex
	uids := map[int]int{}
	failures := []string{}
	var wg sync.WaitGroup
	work := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				res, err := runner().Run(context.Background(), s, 20*time.Second)
				mu.Lock()
				switch got := strings.TrimSpace(string(res.Stdout)); {
				case err != nil:
					failures = append(failures, err.Error())
				case res.ExitCode != 0 || got != strconv.Itoa(res.UID):
					failures = append(failures, res.Reason()+": "+got+" "+string(res.Stderr))
				default:
					uids[res.UID]++
				}
				mu.Unlock()
			}
		}()
	}
	for i := range 100 {
		work <- i
	}
	close(work)
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d of 100 runs failed beside 20 processes of nobody; first: %s", len(failures), failures[0])
	}
	for uid := range uids {
		if uid < FirstRunUID || uid >= FirstRunUID+RunUIDs {
			t.Fatalf("a run had uid %d, outside the range", uid)
		}
	}
	if len(uids) < 2 {
		t.Fatalf("100 runs, 4 at a time, all as %v", uids)
	}
	if n := len(runUIDs.used); n != 0 {
		t.Fatalf("%d uids still held after every run ended", n)
	}
}
