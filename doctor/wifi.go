package doctor

import (
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
)

// WiFi is doctor's Wi-Fi line. A board without a radio and nothing
// configured is fine (Ethernet, or a Pi without Wi-Fi); networks that are
// configured but not joined are worth a look, not a failure: Ethernet may
// carry the traffic.
func WiFi(n config.Network) Check {
	info, st := daemon.WiFiInfo(n)
	c := Check{What: "wifi", OK: true, Info: info}
	switch {
	case st.Joined() || len(n.WiFi) == 0:
	case st.Iface == "":
		c.Warn, c.Fix = true, "this board has no Wi-Fi radio, or its driver did not load (the console shows clawedge-init's wifi lines at boot): use Ethernet"
	default:
		c.Warn, c.Fix = true, "check each ssid and psk in network.wifi and that the network is in range; the console shows clawedge-init's join attempts"
	}
	return c
}
