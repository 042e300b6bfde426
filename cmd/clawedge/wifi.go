package main

import (
	"strings"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/internal/wlan"
)

// wifiState reads the board's radio over nl80211, read-only: clawedge-init
// joins the networks, clawedge only says where the board is (tests put a
// fake radio here).
var wifiState = wlan.Current

// wifiInfo is the Wi-Fi status without its "wifi: " label: "no radio
// (wlan0 absent)", `wlan0 joined "Home", signal -52 dBm`. Only the
// networks' names are read from the config, never their keys.
func wifiInfo(n config.Network) (info string, st wlan.State) {
	ssids := make([]string, len(n.WiFi))
	for i, w := range n.WiFi {
		ssids[i] = w.SSID
	}
	st = wifiState()
	return strings.TrimPrefix(st.Line(ssids), "wifi: "), st
}

// wifiCheck is doctor's Wi-Fi line. A board without a radio and nothing
// configured is fine (Ethernet, or a Pi without Wi-Fi); networks that are
// configured but not joined are worth a look, not a failure: Ethernet may
// carry the traffic.
func wifiCheck(n config.Network) check {
	info, st := wifiInfo(n)
	c := check{what: "wifi", ok: true, info: info}
	switch {
	case st.Joined() || len(n.WiFi) == 0:
	case st.Iface == "":
		c.warn, c.fix = true, "this board has no Wi-Fi radio, or its driver did not load (the console shows clawedge-init's wifi lines at boot): use Ethernet"
	default:
		c.warn, c.fix = true, "check each ssid and psk in network.wifi and that the network is in range; the console shows clawedge-init's join attempts"
	}
	return c
}
