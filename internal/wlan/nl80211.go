package wlan

import (
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/wifi"
	"golang.org/x/sys/unix"
)

// Radio is the board's Wi-Fi over nl80211: github.com/mdlayher/wifi lists
// the interfaces, sets the country and reads the link, and the connect is
// sent here over its generic netlink connection because the library's
// ConnectWPAPSK takes a passphrase, and a network's key may be given as the
// 64-hex-digit PMK itself (clawedge-init derives the PMK either way).
// Listing and reading the link need no privilege; country, connect and
// disconnect need CAP_NET_ADMIN, which only clawedge-init has.
type Radio struct {
	c   *wifi.Client
	gen *genetlink.Conn
	fam genetlink.Family
}

// Open connects to nl80211. It fails when the kernel has no nl80211 (no
// cfg80211 module loaded: no Wi-Fi driver at all).
func Open() (*Radio, error) {
	c, err := wifi.New()
	if err != nil {
		return nil, err
	}
	gen, err := genetlink.Dial(nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	fam, err := gen.GetFamily("nl80211")
	if err != nil {
		c.Close()
		gen.Close()
		return nil, err
	}
	return &Radio{c: c, gen: gen, fam: fam}, nil
}

// Close releases the netlink sockets.
func (r *Radio) Close() error {
	r.gen.Close()
	return r.c.Close()
}

func (r *Radio) iface(name string) (*wifi.Interface, error) {
	ifs, err := r.c.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifs {
		if i.Name == name {
			return i, nil
		}
	}
	return nil, fmt.Errorf("no Wi-Fi interface %s", name)
}

// Interfaces are the station (client) interfaces, e.g. wlan0.
func (r *Radio) Interfaces() ([]string, error) {
	ifs, err := r.c.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, i := range ifs {
		if i.Name != "" && i.Type == wifi.InterfaceTypeStation {
			out = append(out, i.Name)
		}
	}
	return out, nil
}

// SetCountry sets the regulatory domain (an ISO 3166 code).
func (r *Radio) SetCountry(code string) error {
	return r.c.SetRegulatoryRegion(code, wifi.RegulatoryHintUser)
}

// Connect asks for a WPA2-PSK (CCMP) connect with the 4-way handshake done
// by the firmware from the PMK (NL80211_ATTR_WANT_1X_4WAY_HS): the same
// attributes as wifi's ConnectWPAPSK, with the key as given.
func (r *Radio) Connect(ifname, ssid string, pmk [32]byte) error {
	i, err := r.iface(ifname)
	if err != nil {
		return err
	}
	const ccmp, psk = 0xfac04, 0xfac02 // cipher and AKM suite selectors
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.NL80211_ATTR_IFINDEX, uint32(i.Index))
	ae.Bytes(unix.NL80211_ATTR_SSID, []byte(ssid))
	ae.Uint32(unix.NL80211_ATTR_WPA_VERSIONS, unix.NL80211_WPA_VERSION_2)
	ae.Uint32(unix.NL80211_ATTR_CIPHER_SUITE_GROUP, ccmp)
	ae.Uint32(unix.NL80211_ATTR_CIPHER_SUITES_PAIRWISE, ccmp)
	ae.Uint32(unix.NL80211_ATTR_AKM_SUITES, psk)
	ae.Flag(unix.NL80211_ATTR_WANT_1X_4WAY_HS, true)
	ae.Bytes(unix.NL80211_ATTR_PMK, pmk[:])
	ae.Uint32(unix.NL80211_ATTR_AUTH_TYPE, unix.NL80211_AUTHTYPE_OPEN_SYSTEM)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = r.gen.Execute(genetlink.Message{Header: genetlink.Header{Command: unix.NL80211_CMD_CONNECT, Version: r.fam.Version}, Data: b},
		r.fam.ID, netlink.Request|netlink.Acknowledge)
	return err
}

// Disconnect leaves the network the interface is on.
func (r *Radio) Disconnect(ifname string) error {
	i, err := r.iface(ifname)
	if err != nil {
		return err
	}
	return r.c.Disconnect(i)
}

// Link is the network the interface is associated with and its signal.
func (r *Radio) Link(ifname string) (Link, error) {
	i, err := r.iface(ifname)
	if err != nil {
		return Link{}, err
	}
	bss, err := r.c.BSS(i)
	if err != nil || bss == nil || bss.Status != wifi.BSSStatusAssociated {
		return Link{}, nil // not associated (nl80211 answers ENOENT-like errors then)
	}
	l := Link{Up: true, SSID: bss.SSID, SignalDBm: int(bss.Signal / 100)}
	if st, err := r.c.StationInfo(i); err == nil && len(st) > 0 {
		l.SignalDBm = st[0].Signal
	}
	return l, nil
}
