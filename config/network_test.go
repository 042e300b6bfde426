package config

import (
	"reflect"
	"strings"
	"testing"
)

const (
	homePSK  = "correct horse battery staple"
	phonePSK = "hotspot-passphrase-9"
)

const wifiExample = `network:
  wifi:
    - {ssid: Home, psk: "${HOME_PSK}", country: DE}
    - ssid: Phone hotspot
      psk: ${PHONE_PSK}
      country: DE
`

var wifiEnv = map[string]string{"HOME_PSK": homePSK, "PHONE_PSK": phonePSK}

func TestNetworkWiFi(t *testing.T) {
	c, err := Parse([]byte(wifiExample), "n.yaml", envFrom(wifiEnv))
	if err != nil {
		t.Fatal(err)
	}
	want := []WiFi{{SSID: "Home", PSK: homePSK, Country: "DE"}, {SSID: "Phone hotspot", PSK: phonePSK, Country: "DE"}}
	if !reflect.DeepEqual(c.Network.WiFi, want) {
		t.Errorf("wifi = %+v, want %+v (in the file's order: it is the priority)", c.Network.WiFi, want)
	}
	out, _ := c.Redacted()
	if strings.Contains(string(out), homePSK) || strings.Contains(string(out), phonePSK) ||
		strings.Count(string(out), `psk: "[redacted]"`) != 2 {
		t.Errorf("redacted output:\n%s", out)
	}
	again := strings.Replace(string(out), `psk: "[redacted]"`, `psk: ${HOME_PSK}`, 1)
	again = strings.Replace(again, `psk: "[redacted]"`, `psk: ${PHONE_PSK}`, 1)
	c2, err := Parse([]byte(again), "n.yaml", envFrom(wifiEnv))
	if err != nil {
		t.Fatalf("redacted output does not parse: %v\n%s", err, out)
	}
	if !reflect.DeepEqual(c.Network, c2.Network) {
		t.Errorf("round trip changed the network: %+v, %+v\n%s", c.Network, c2.Network, out)
	}
	if c := mustParse(t, "data_dir: ./d\n"); c.Network.WiFi != nil {
		t.Errorf("no network section: %+v", c.Network)
	}
}

func TestNetworkWiFiErrors(t *testing.T) {
	badPSK := "passé-word"
	for _, tc := range []struct{ src, want string }{
		{"network:\n  wifi:\n    - {psk: \"${HOME_PSK}\", country: DE}\n", "test.yaml:3:7: network.wifi[0]: ssid is required"},
		{"network:\n  wifi:\n    - {ssid: " + strings.Repeat("x", 33) + ", psk: \"${HOME_PSK}\", country: DE}\n", "at most 32"},
		{"network:\n  wifi:\n    - {ssid: A, country: DE}\n", "network.wifi[0]: psk is required"},
		{"network:\n  wifi:\n    - {ssid: A, psk: \"${SHORT}\", country: DE}\n", "is 7 characters long; WPA2 wants 8 to 63"},
		{"network:\n  wifi:\n    - {ssid: A, psk: \"${BAD}\", country: DE}\n", "position 5 that is not printable ASCII"},
		{"network:\n  wifi:\n    - {ssid: A, psk: \"" + strings.Repeat("g", 64) + "\", country: DE}\n", "not a hex digit"},
		{"network:\n  wifi:\n    - {ssid: A, psk: \"${HOME_PSK}\"}\n", "network.wifi[0]: country is required"},
		{"network:\n  wifi:\n    - {ssid: A, psk: \"${HOME_PSK}\", country: de}\n", `test.yaml:3:46: network.wifi[0].country: "de" is not a two-letter`},
		{"network:\n  wifi:\n    - {ssid: A, psk: \"${HOME_PSK}\", country: DE}\n    - {ssid: B, psk: \"${HOME_PSK}\", country: FR}\n", "FR differs from the DE"},
		{"network:\n  wifi:\n    - {ssid: A, psk: \"${HOME_PSK}\", country: DE}\n    - {ssid: A, psk: \"${HOME_PSK}\", country: DE}\n", `"A" is already network.wifi[0]`},
		{"network:\n  wifi:\n    - {ssid: A, pks: x, country: DE}\n", "pks"},
		{"network:\n  wlan: []\n", "wlan"},
	} {
		e := parseError(t, tc.src, map[string]string{"HOME_PSK": homePSK, "SHORT": "1234567", "BAD": badPSK})
		if !strings.Contains(e.Error(), tc.want) {
			t.Errorf("%q:\n%v\nwant %q", tc.src, e, tc.want)
		}
		for _, secret := range []string{homePSK, badPSK, "1234567"} {
			if strings.Contains(e.Error(), secret) {
				t.Errorf("the error shows a passphrase: %v", e)
			}
		}
	}
	// 64 hex digits are the key itself.
	c := mustParse(t, "network:\n  wifi:\n    - {ssid: A, psk: \""+strings.Repeat("0f", 32)+"\", country: US}\n")
	if len(c.Network.WiFi) != 1 || len(c.Network.WiFi[0].PSK) != 64 {
		t.Errorf("hex key: %+v", c.Network.WiFi)
	}
}
