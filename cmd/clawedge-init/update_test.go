package main

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawedge/clawedge/update"
)

func TestImageUpdater(t *testing.T) {
	if imageUpdater("console=ttyS0 root=PARTUUID=c1a3ed9e-02 ro") != nil {
		t.Error("an updater on an image without slots")
	}
	u := imageUpdater("console=ttyS0 root=PARTUUID=c1a3ed9e-03 clawedge.slot=b")
	if u == nil || u.Current != "b" || u.Slots["a"].Device != "/dev/mmcblk0p2" || string(u.Boot.(update.DirFS)) != bootDir {
		t.Fatalf("%+v", u)
	}
	if tg, err := u.Target(); err != nil || tg != "a" {
		t.Errorf("target %s %v", tg, err)
	}
}

// The daemon's sd_notify datagrams, as cmd/clawedge's notifier sends them,
// end the trial once one carries READY=1; update requests reach install.
func TestNotifyLoop(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	c, err := listenNotify(path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ready, urls := make(chan struct{}), make(chan string, 4)
	go notifyLoop(c, ready, func(url string) { urls <- url }, func(string) {})
	send := func(msg string) {
		s, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: path, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		s.Write([]byte(msg))
		s.Close()
	}
	send("STATUS=starting")
	send("READY=0\nSTATUS=READY=1 later")
	select {
	case <-ready:
		t.Fatal("ready before READY=1")
	default:
	}
	send("STATUS=clawedge v2 ready on board periph\nREADY=1")
	<-ready         // a hang here fails the test by its timeout
	send("READY=1") // again: closed once only
	send(update.RequestKey + "https://example.org/clawedge-v3.update")
	if got := <-urls; got != "https://example.org/clawedge-v3.update" {
		t.Errorf("update request %q", got)
	}
}

func TestHealthTimeout(t *testing.T) {
	for cmdline, want := range map[string]time.Duration{
		"root=x clawedge.slot=b":                      update.HealthTimeout,
		"root=x clawedge.slot=b clawedge.health=20s":  20 * time.Second,
		"root=x clawedge.health=-5s clawedge.slot=b":  update.HealthTimeout,
		"root=x clawedge.health=soon clawedge.slot=b": update.HealthTimeout,
	} {
		if got := healthTimeout(cmdline); got != want {
			t.Errorf("healthTimeout(%q) = %v, want %v", cmdline, got, want)
		}
	}
}

func TestWatchTrial(t *testing.T) {
	t.Run("ready commits", func(t *testing.T) {
		ready, expire := make(chan struct{}), make(chan time.Time)
		close(ready)
		committed, rebooted := false, false
		watchTrial(ready, expire, time.Minute, func() error { committed = true; return nil }, func() { rebooted = true })
		if !committed || rebooted {
			t.Errorf("committed %v rebooted %v", committed, rebooted)
		}
	})
	t.Run("not ready in time reboots", func(t *testing.T) {
		ready, expire := make(chan struct{}), make(chan time.Time, 1)
		expire <- time.Time{}
		committed, rebooted := false, false
		watchTrial(ready, expire, time.Minute, func() error { committed = true; return nil }, func() { rebooted = true })
		if committed || !rebooted {
			t.Errorf("committed %v rebooted %v", committed, rebooted)
		}
	})
}
