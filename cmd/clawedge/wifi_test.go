package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/wlan"
	"github.com/clawedge/clawedge/internal/wlan/wlantest"
)

// inProcess runs one clawedge command in this process and returns what it
// printed; its error is not the test's concern.
func inProcess(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&out)
	root.Execute()
	return out.String()
}

// status, doctor and the console's status say where the board's Wi-Fi is,
// read from the radio (a fake here), and never the passphrase.
func TestWifiStatusAndDoctor(t *testing.T) {
	const psk = "wifi-canary-pass"
	cfgPath, _ := writeConfig(t, "console: {stdin: false}\nnetwork:\n  wifi: [{ssid: Home, psk: "+psk+", country: DE}]\n")
	saved := daemon.WiFiState
	t.Cleanup(func() { daemon.WiFiState = saved })
	joined := &wlantest.Radio{Ifs: []string{"wlan0"}, Joinable: map[string]int{"Home": -58}}
	joined.Connect("wlan0", "Home", [32]byte{})
	for _, c := range []struct {
		radio  *wlantest.Radio
		line   string
		doctor string
	}{
		{&wlantest.Radio{}, `wifi: no radio (wlan0 absent); configured: "Home"`, "[warn] wifi: no radio"},
		{&wlantest.Radio{Ifs: []string{"wlan0"}}, `wifi: wlan0 not joined (configured: "Home")`, "[warn] wifi: wlan0 not joined"},
		{joined, `wifi: wlan0 joined "Home", signal -58 dBm`, `[ok  ] wifi: wlan0 joined "Home"`},
	} {
		daemon.WiFiState = func() wlan.State { return wlan.Read(c.radio, nil) }
		status := inProcess(t, "status", "--config", cfgPath)
		console := inProcess(t, "exec", "--config", cfgPath, "@sys/status{}")
		doctor := inProcess(t, "doctor", "--config", cfgPath)
		if !strings.Contains(status, c.line+"\n") {
			t.Errorf("status lacks %q:\n%s", c.line, status)
		}
		if !strings.Contains(console, c.line+"\n") {
			t.Errorf("sys/status lacks %q:\n%s", c.line, console)
		}
		if !strings.Contains(doctor, c.doctor) {
			t.Errorf("doctor lacks %q:\n%s", c.doctor, doctor)
		}
		if strings.Contains(status+console+doctor, psk) {
			t.Errorf("the passphrase is shown:\n%s\n%s\n%s", status, console, doctor)
		}
	}
	// No Wi-Fi configured and no radio (QEMU, a Pi 3 without the module):
	// a plain fact, not a problem.
	cfgPath, _ = writeConfig(t, "console: {stdin: false}\n")
	daemon.WiFiState = func() wlan.State { return wlan.Read(&wlantest.Radio{}, nil) }
	if doctor := inProcess(t, "doctor", "--config", cfgPath); !strings.Contains(doctor, "[ok  ] wifi: no radio (wlan0 absent)\n") {
		t.Errorf("doctor without Wi-Fi:\n%s", doctor)
	}
}
