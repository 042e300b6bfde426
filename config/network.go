package config

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// The network of the SD card image (docs/install.md): the Wi-Fi networks
// the board joins, in priority order (the first one in range wins).
//
//	network:
//	  wifi:
//	    - {ssid: Home, psk: "${secret:wifi}", country: DE}
//	    - {ssid: Phone hotspot, psk: "${PHONE_PSK}", country: DE}
//
// Ethernet needs no configuration. Decoding, validation and the Redacted
// writer of the section are all in this file.

// Network configures the board's network links.
type Network struct {
	// WiFi lists the networks in priority order: the earlier, the
	// preferred.
	WiFi []WiFi `yaml:"wifi"`
}

// WiFi is one WPA2-PSK network.
type WiFi struct {
	// SSID is the network's name: 1 to 32 bytes.
	SSID string `yaml:"ssid"`
	// PSK is the passphrase (8 to 63 printable ASCII characters) or the
	// 256-bit key itself as 64 hex digits. A secret: never logged.
	PSK Secret `yaml:"psk"`
	// Country is the ISO 3166-1 alpha-2 code of where the board is: it sets
	// the radio's regulatory domain (which channels and powers are legal).
	Country string `yaml:"country"`
}

var (
	networkKeys = []string{"wifi"}
	wifiKeys    = []string{"ssid", "psk", "country"}
)

func (d *decoder) network(n ast.Node, dst *Network) {
	d.fields(n, "network", networkKeys, func(k string, v ast.Node) {
		list := []WiFi{}
		d.items(v, "network.wifi", func(i int, v ast.Node) {
			var w WiFi
			p := fmt.Sprintf("network.wifi[%d]", i)
			d.fields(v, p, wifiKeys, func(k string, v ast.Node) {
				switch k {
				case "ssid":
					d.str(v, p+".ssid", &w.SSID)
				case "psk":
					d.secret(v, p+".psk", &w.PSK)
				case "country":
					d.str(v, p+".country", &w.Country)
				}
			})
			list = append(list, w)
		})
		dst.WiFi = list
	})
}

func (d *decoder) validateNetwork(n *Network) {
	seen := map[string]int{}
	country := ""
	for i, w := range n.WiFi {
		p := fmt.Sprintf("network.wifi[%d]", i)
		switch {
		case w.SSID == "":
			d.missing(p+".ssid", " (the network's name)")
		case len(w.SSID) > 32:
			d.errf(p+".ssid", "the SSID is %d bytes long; 802.11 allows at most 32", len(w.SSID))
		default:
			if j, dup := seen[w.SSID]; dup {
				d.errf(p+".ssid", "%s is already network.wifi[%d]; list each network once, in priority order", d.quote(p+".ssid", w.SSID), j)
			}
			seen[w.SSID] = i
		}
		if w.PSK == "" {
			d.missing(p+".psk", ` (the passphrase, such as "${secret:wifi}"; open networks are not supported)`)
		} else if why := pskProblem(string(w.PSK)); why != "" {
			d.errf(p+".psk", "the passphrase %s", why) // never the value: it is a secret
		}
		switch {
		case w.Country == "":
			d.missing(p+".country", " (the ISO 3166-1 code of where the board is, such as DE or US: it decides which channels are legal)")
		case !isCountryCode(w.Country):
			d.errf(p+".country", "%s is not a two-letter ISO 3166-1 country code in capitals (such as DE or US)", d.quote(p+".country", w.Country))
		case country != "" && w.Country != country:
			d.errf(p+".country", "%s differs from the %s of an earlier network: the radio has one regulatory domain", w.Country, country)
		default:
			country = w.Country
		}
	}
}

// pskProblem says what is wrong with a WPA2 passphrase or hex key, or "".
// IEEE 802.11-2020 J.4.1: a passphrase is 8 to 63 ASCII characters from
// 32 to 126; 64 characters must be the 256-bit PSK in hex.
func pskProblem(psk string) string {
	if len(psk) == 64 {
		for _, c := range psk {
			if !isHexDigit(c) {
				return "is 64 characters long, so it must be the key in hex, but it has a character that is not a hex digit"
			}
		}
		return ""
	}
	if len(psk) < 8 || len(psk) > 63 {
		return fmt.Sprintf("is %d characters long; WPA2 wants 8 to 63 (or the key as 64 hex digits)", len(psk))
	}
	for i, c := range psk {
		if c < 32 || c > 126 {
			return fmt.Sprintf("has a character at position %d that is not printable ASCII, which WPA2 passphrases are limited to", i+1)
		}
	}
	return ""
}

func isHexDigit(c rune) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isCountryCode(s string) bool {
	return len(s) == 2 && s[0] >= 'A' && s[0] <= 'Z' && s[1] >= 'A' && s[1] <= 'Z'
}

// secretValues are the network section's secret values, scrubbed from the
// rest of the Redacted output.
func (n *Network) secretValues() []string {
	var out []string
	for _, w := range n.WiFi {
		out = append(out, w.PSK.Reveal())
	}
	return out
}

// writeNetwork writes the network section for Redacted.
func (c *Config) writeNetwork(w *writer) {
	if len(c.Network.WiFi) == 0 {
		return
	}
	w.key(0, "network")
	w.key(1, "wifi")
	for _, n := range c.Network.WiFi {
		w.item(2, "ssid: "+w.str(n.SSID))
		w.kv(3, "psk", yamlString(n.PSK.String()))
		w.kv(3, "country", w.str(n.Country))
	}
}
