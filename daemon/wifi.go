package daemon

import (
	"strings"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/internal/wlan"
)

// WiFiState reads the board's radio over nl80211, read-only: clawedge-init
// joins the networks, clawedge only says where the board is (tests put a
// fake radio here).
var WiFiState = wlan.Current

// WiFiInfo is the Wi-Fi status without its "wifi: " label: "no radio
// (wlan0 absent)", `wlan0 joined "Home", signal -52 dBm`. Only the
// networks' names are read from the config, never their keys.
func WiFiInfo(n config.Network) (info string, st wlan.State) {
	ssids := make([]string, len(n.WiFi))
	for i, w := range n.WiFi {
		ssids[i] = w.SSID
	}
	st = WiFiState()
	return strings.TrimPrefix(st.Line(ssids), "wifi: "), st
}
