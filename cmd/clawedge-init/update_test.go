package main

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/clawedge/clawedge/update"
)

func TestParseSettle(t *testing.T) {
	for _, tc := range []struct {
		out    string
		failed string
		trial  bool
	}{
		{"", "", false},
		{"failed: update to v2 failed (slot b did not start); still running v1 on slot a\n", "update to v2 failed (slot b did not start); still running v1 on slot a", false},
		{"trying: trying update v2 on slot b: it is kept once healthy\n", "", true},
	} {
		got := parseSettle(tc.out)
		if got.failed != tc.failed || got.trial != tc.trial {
			t.Errorf("parseSettle(%q) = %+v", tc.out, got)
		}
	}
	if !abImage("console=ttyS0 root=PARTUUID=c1a3ed9e-03 clawedge.slot=b") || abImage("root=PARTUUID=c1a3ed9e-02 ro") {
		t.Error("abImage")
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
	go notifyLoop(c, ready, func(url string) { urls <- url })
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

func TestWatchTrial(t *testing.T) {
	t.Run("ready commits", func(t *testing.T) {
		ready, expire := make(chan struct{}), make(chan time.Time)
		close(ready)
		committed, rebooted := false, false
		watchTrial(ready, expire, func() error { committed = true; return nil }, func() { rebooted = true })
		if !committed || rebooted {
			t.Errorf("committed %v rebooted %v", committed, rebooted)
		}
	})
	t.Run("not ready in time reboots", func(t *testing.T) {
		ready, expire := make(chan struct{}), make(chan time.Time, 1)
		expire <- time.Time{}
		committed, rebooted := false, false
		watchTrial(ready, expire, func() error { committed = true; return nil }, func() { rebooted = true })
		if committed || !rebooted {
			t.Errorf("committed %v rebooted %v", committed, rebooted)
		}
	})
}
