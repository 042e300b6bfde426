package main

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
)

// TestPMK: the test vectors of IEEE 802.11i-2004, Annex H.4.3 (PSK
// mapping, "Test vectors"), which IEEE 802.11-2020 J.4.2 repeats.
func TestPMK(t *testing.T) {
	for _, v := range []struct{ pass, ssid, want string }{
		{"password", "IEEE", "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e"},
		{"ThisIsAPassword", "ThisIsASSID", "0dc0d6eb90555ed6419756b9a15ec3e3209b63df707dd508d14581f8982721af"},
	} {
		k := pmk(v.pass, v.ssid)
		if got := hex.EncodeToString(k[:]); got != v.want {
			t.Errorf("PMK(%q, %q) = %s, want %s", v.pass, v.ssid, got, v.want)
		}
	}
	// 64 hex digits are the key itself, not a passphrase.
	raw := "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e"
	if k := pmk(raw, "other"); hex.EncodeToString(k[:]) != raw {
		t.Errorf("a hex psk was stretched: %x", k)
	}
}

func TestWiFiNetworks(t *testing.T) {
	c := config.Network{WiFi: []config.WiFi{
		{SSID: "Home", PSK: "password-home", Country: "DE"},
		{SSID: "IEEE", PSK: "password", Country: "DE"},
	}}
	nets := wifiNetworks(c)
	if len(nets) != 2 || nets[0].SSID != "Home" || nets[0].Priority != 0 || nets[1].Priority != 1 || nets[1].Country != "DE" {
		t.Fatalf("networks %+v", nets)
	}
	if hex.EncodeToString(nets[1].PMK[:]) != "f42c6fc52df0ebef9ebb4b90b38a5f902e83fe1b135a70e23aed762e9710a12e" {
		t.Errorf("IEEE's PMK %x", nets[1].PMK)
	}
	for _, line := range []string{nets[0].String(), wifiStatus(nets, nil), wifiStatus(nets, []string{"wlan0"})} {
		if strings.Contains(line, "password") || strings.Contains(line, hex.EncodeToString(nets[0].PMK[:])) {
			t.Errorf("a secret in %q", line)
		}
	}
	if s := wifiStatus(nets, nil); !strings.Contains(s, "no Wi-Fi radio found") || !strings.Contains(s, `"Home"`) {
		t.Errorf("no radio: %q", s)
	}
}

func TestWiFiInterfaces(t *testing.T) {
	sys := t.TempDir()
	for _, name := range []string{"wlan1", "eth0", "wlan0", "usb0"} {
		os.MkdirAll(filepath.Join(sys, name), 0o755)
	}
	os.Symlink("../../phy0", filepath.Join(sys, "wlan0", "phy80211"))
	os.Symlink("../../phy1", filepath.Join(sys, "wlan1", "phy80211"))
	if got := strings.Join(wifiInterfaces(sys), " "); got != "wlan0 wlan1" {
		t.Errorf("wifi interfaces %q", got)
	}
	if got := wifiInterfaces(filepath.Join(sys, "eth0")); len(got) != 0 {
		t.Errorf("found %v where there is no radio", got)
	}
}

func TestModelStatus(t *testing.T) {
	dir := t.TempDir()
	if s := modelStatus(nil, dir); !strings.Contains(s, "none configured (models.local") {
		t.Errorf("nothing: %q", s)
	}
	os.WriteFile(filepath.Join(dir, "tiny.gguf"), make([]byte, 3<<20), 0o644)
	if s := modelStatus(nil, dir); !strings.Contains(s, "tiny.gguf is on the boot partition") {
		t.Errorf("a file not named: %q", s)
	}
	if s := modelStatus(&config.LocalModel{Path: filepath.Join(dir, "tiny.gguf")}, dir); !strings.Contains(s, "tiny.gguf (3 MiB), loaded at the first message") {
		t.Errorf("configured: %q", s)
	}
	if s := modelStatus(&config.LocalModel{Path: filepath.Join(dir, "gone.gguf")}, dir); !strings.Contains(s, "gone.gguf is missing") {
		t.Errorf("missing: %q", s)
	}
}
