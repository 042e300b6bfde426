package wlan_test

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/clawedge/clawedge/internal/wlan"
	"github.com/clawedge/clawedge/internal/wlan/wlantest"
)

// Each state of the radio gives one line that says it plainly, and a
// board without a radio is a fact, not an error.
func TestLine(t *testing.T) {
	home := []string{"Home", "Phone"}
	joined := &wlantest.Radio{Ifs: []string{"wlan0"}, Joinable: map[string]int{"Home": -52}}
	joined.Connect("wlan0", "Home", [32]byte{})
	for _, c := range []struct {
		name string
		s    wlan.State
		conf []string
		want string
		up   bool
	}{
		{"QEMU, a Pi 3 without the module", wlan.Read(&wlantest.Radio{}, nil), nil, "wifi: no radio (wlan0 absent)", false},
		{"no radio, networks configured", wlan.Read(&wlantest.Radio{}, nil), home,
			`wifi: no radio (wlan0 absent); configured: "Home", "Phone"`, false},
		{"no nl80211 in the kernel", wlan.Read(nil, fmt.Errorf("nl80211: %w", fs.ErrNotExist)), nil,
			"wifi: no radio (no nl80211: no Wi-Fi driver loaded)", false},
		{"nl80211 refused", wlan.Read(nil, errors.New("permission denied")), nil, "wifi: no radio (nl80211: permission denied)", false},
		{"joined", wlan.Read(joined, nil), home, `wifi: wlan0 joined "Home", signal -52 dBm`, true},
		{"not joined", wlan.Read(&wlantest.Radio{Ifs: []string{"wlan0"}}, nil), home,
			`wifi: wlan0 not joined (configured: "Home", "Phone")`, false},
		{"not joined, nothing configured", wlan.Read(&wlantest.Radio{Ifs: []string{"wlan1"}}, nil), nil,
			"wifi: wlan1 not joined (none configured in network.wifi)", false},
		{"a name with a control character", wlan.Read(&wlantest.Radio{Ifs: []string{"wlan0"}}, nil), []string{"evil\x1b[2J"},
			`wifi: wlan0 not joined (configured: "evil\x1b[2J")`, false},
	} {
		if got := c.s.Line(c.conf); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if c.s.Joined() != c.up {
			t.Errorf("%s: Joined() = %v", c.name, c.s.Joined())
		}
	}
}
