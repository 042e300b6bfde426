package main

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/internal/wlan/wlantest"
)

// harness runs the loop with a fake clock: sleep records each wait, calls
// hook (which may change the radio), and ends the loop after limit waits.
type harness struct {
	radio  *wlantest.Radio
	sleeps []time.Duration
	log    []string
	ups    []string
}

func runLoop(t *testing.T, r *wlantest.Radio, nets []wifiNetwork, limit int, hook func(n int, d time.Duration)) *harness {
	t.Helper()
	h := &harness{radio: r}
	w := &wifiLoop{r: r, nets: nets,
		logf: func(f string, a ...any) { h.log = append(h.log, fmt.Sprintf(f, a...)) },
		up:   func(i string) { h.ups = append(h.ups, i) },
		sleep: func(d time.Duration) bool {
			h.sleeps = append(h.sleeps, d)
			if hook != nil {
				hook(len(h.sleeps), d)
			}
			return len(h.sleeps) < limit
		}}
	w.run()
	return h
}

func testNets() []wifiNetwork {
	return wifiNetworks(config.Network{WiFi: []config.WiFi{
		{SSID: "Home", PSK: "secret-home-pass", Country: "DE"},
		{SSID: "Phone", PSK: "secret-phone-pass", Country: "FR"},
	}})
}

// The preferred network is tried first; when it does not answer the next
// one is joined with its own PMK and country, DHCP starts on the interface
// once, and neither passphrase nor key reaches the console.
func TestWifiLoopPriority(t *testing.T) {
	nets := testNets()
	r := &wlantest.Radio{Ifs: []string{"wlan0"}, Joinable: map[string]int{"Phone": -61}}
	h := runLoop(t, r, nets, wifiJoinPolls+3, nil)
	if strings.Join(r.Connects, ",") != "Home,Phone" || strings.Join(r.Countries, ",") != "DE,FR" {
		t.Fatalf("connects %v, countries %v", r.Connects, r.Countries)
	}
	if r.PMKs["Phone"] != nets[1].PMK {
		t.Error("Phone connected with another network's key")
	}
	all := strings.Join(h.log, "\n")
	if !strings.Contains(all, `wifi: wlan0: joined "Phone" (priority 1, country FR), signal -61 dBm`) {
		t.Errorf("no join line in:\n%s", all)
	}
	if len(h.ups) != 1 || h.ups[0] != "wlan0" {
		t.Errorf("DHCP started on %v, want wlan0 once", h.ups)
	}
	for _, n := range nets {
		for _, secret := range []string{"secret-home-pass", "secret-phone-pass", hex.EncodeToString(n.PMK[:])} {
			if strings.Contains(all, secret) {
				t.Errorf("a secret on the console:\n%s", all)
			}
		}
	}
}

// No network answers: each round tries them all, then waits twice as long
// as the last time, up to the cap.
func TestWifiLoopBackoff(t *testing.T) {
	nets := wifiNetworks(config.Network{WiFi: []config.WiFi{{SSID: "Refused", PSK: "secret-pass-1", Country: "DE"}}})
	r := &wlantest.Radio{Ifs: []string{"wlan0"}}
	h := runLoop(t, r, nets, 9, nil)
	want := []time.Duration{2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second,
		64 * time.Second, 128 * time.Second, 256 * time.Second, wifiBackoffMax}
	if fmt.Sprint(h.sleeps) != fmt.Sprint(want) {
		t.Errorf("waits %v, want %v", h.sleeps, want)
	}
	if !strings.Contains(h.log[1], `connecting to "Refused"`) || !strings.Contains(h.log[1], "operation not supported") {
		t.Errorf("the refusal is not said: %q", h.log[1])
	}
}

// A lost link is joined again, the backoff starts over, and DHCP is not
// started a second time.
func TestWifiLoopReconnect(t *testing.T) {
	r := &wlantest.Radio{Ifs: []string{"wlan0"}, Joinable: map[string]int{"Home": -40}}
	lost := false
	h := runLoop(t, r, testNets(), 6, func(n int, d time.Duration) {
		if d == wifiWatch && !lost {
			lost, r.Cur = true, "" // the access point went away
		}
	})
	all := strings.Join(h.log, "\n")
	if strings.Count(all, `joined "Home"`) != 2 || !strings.Contains(all, `wifi: wlan0: lost "Home"; joining again`) {
		t.Errorf("no rejoin in:\n%s", all)
	}
	if len(h.ups) != 1 {
		t.Errorf("DHCP started %d times", len(h.ups))
	}
}

// No radio (QEMU, a Pi 2): one clear line after the wait, then the loop ends.
func TestWifiLoopNoRadio(t *testing.T) {
	h := runLoop(t, &wlantest.Radio{}, testNets(), 100, nil)
	if len(h.sleeps) != wifiRadioWait || len(h.log) != 1 || !strings.Contains(h.log[0], "no Wi-Fi radio found; Ethernet only") {
		t.Errorf("%d waits, log %q", len(h.sleeps), h.log)
	}
}
