package main

import (
	"crypto/pbkdf2"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/clawedge/clawedge/config"
)

// wifiNetwork is what an nl80211 connect needs for one configured network.
// The Pi's Wi-Fi chips run the WPA2 4-way handshake in firmware when given
// the pairwise master key, so the passphrase itself never leaves this
// process and no wpa_supplicant is needed.
type wifiNetwork struct {
	SSID string
	PMK  [32]byte
	// Priority is 0 for the preferred network, then 1, 2...: the order of
	// network.wifi in the config.
	Priority int
	// Country is the regulatory domain to set before scanning.
	Country string
}

// String leaves the key out: a network may be logged.
func (n wifiNetwork) String() string {
	return fmt.Sprintf("%q (priority %d, country %s)", n.SSID, n.Priority, n.Country)
}

// wifiNetworks turns the config's networks into connect parameters, in
// priority order.
func wifiNetworks(c config.Network) []wifiNetwork {
	out := make([]wifiNetwork, 0, len(c.WiFi))
	for i, w := range c.WiFi {
		out = append(out, wifiNetwork{SSID: w.SSID, PMK: pmk(w.PSK.Reveal(), w.SSID), Priority: i, Country: w.Country})
	}
	return out
}

// pmk is the WPA2-PSK pairwise master key (IEEE 802.11-2020 J.4.1): a
// 64-hex-digit psk is the key itself; a passphrase is stretched with
// PBKDF2-HMAC-SHA1, 4096 iterations, the SSID as salt, 256 bits out.
// config validates the psk, so neither step can fail here.
func pmk(psk, ssid string) [32]byte {
	var k [32]byte
	if len(psk) == 64 {
		if b, err := hex.DecodeString(psk); err == nil {
			copy(k[:], b)
			return k
		}
	}
	b, _ := pbkdf2.Key(sha1.New, psk, []byte(ssid), 4096, 32)
	copy(k[:], b)
	return k
}

// wifiInterfaces are the network interfaces with an 802.11 radio behind
// them (a phy80211 link in sysfs), sorted.
func wifiInterfaces(sysClassNet string) []string {
	links, _ := filepath.Glob(filepath.Join(sysClassNet, "*", "phy80211"))
	var out []string
	for _, l := range links {
		out = append(out, filepath.Base(filepath.Dir(l)))
	}
	sort.Strings(out)
	return out
}

// wifiStatus is the console line about Wi-Fi at boot: what is configured
// and whether there is a radio to use it. Said once, not retried in a loop:
// a board without a radio is a fact, not a failure.
func wifiStatus(nets []wifiNetwork, ifaces []string) string {
	switch {
	case len(nets) == 0 && len(ifaces) == 0:
		return "wifi: none configured, no radio"
	case len(nets) == 0:
		return fmt.Sprintf("wifi: radio %s, but no network.wifi in the config (see clawedge.yaml.example on the boot partition)", ifaces[0])
	case len(ifaces) == 0:
		return fmt.Sprintf("wifi: %d network(s) configured (first %s) but no Wi-Fi radio found; Ethernet only", len(nets), nets[0])
	}
	return fmt.Sprintf("wifi: radio %s, %d network(s) configured, first %s; connecting", ifaces[0], len(nets), nets[0])
}
