package main

import (
	"fmt"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	"github.com/mdlayher/wifi"
	"golang.org/x/sys/unix"
)

// nlRadio is the radio of wifiloop.go over nl80211: github.com/mdlayher/wifi
// lists the interfaces, sets the country and reads the link, and the
// connect is sent here over its generic netlink connection because the
// library's ConnectWPAPSK takes a passphrase, and a network's key may be
// given as the 64-hex-digit PMK itself (wifi.go derives the PMK either way).
type nlRadio struct {
	c   *wifi.Client
	gen *genetlink.Conn
	fam genetlink.Family
}

func newNLRadio() (*nlRadio, error) {
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
	return &nlRadio{c: c, gen: gen, fam: fam}, nil
}

func (r *nlRadio) iface(name string) (*wifi.Interface, error) {
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

func (r *nlRadio) Interfaces() ([]string, error) {
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

func (r *nlRadio) SetCountry(code string) error {
	return r.c.SetRegulatoryRegion(code, wifi.RegulatoryHintUser)
}

// Connect asks for a WPA2-PSK (CCMP) connect with the 4-way handshake done
// by the firmware from the PMK (NL80211_ATTR_WANT_1X_4WAY_HS): the same
// attributes as wifi's ConnectWPAPSK, with the key as given.
func (r *nlRadio) Connect(ifname string, n wifiNetwork) error {
	i, err := r.iface(ifname)
	if err != nil {
		return err
	}
	const ccmp, psk = 0xfac04, 0xfac02 // cipher and AKM suite selectors
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.NL80211_ATTR_IFINDEX, uint32(i.Index))
	ae.Bytes(unix.NL80211_ATTR_SSID, []byte(n.SSID))
	ae.Uint32(unix.NL80211_ATTR_WPA_VERSIONS, unix.NL80211_WPA_VERSION_2)
	ae.Uint32(unix.NL80211_ATTR_CIPHER_SUITE_GROUP, ccmp)
	ae.Uint32(unix.NL80211_ATTR_CIPHER_SUITES_PAIRWISE, ccmp)
	ae.Uint32(unix.NL80211_ATTR_AKM_SUITES, psk)
	ae.Flag(unix.NL80211_ATTR_WANT_1X_4WAY_HS, true)
	ae.Bytes(unix.NL80211_ATTR_PMK, n.PMK[:])
	ae.Uint32(unix.NL80211_ATTR_AUTH_TYPE, unix.NL80211_AUTHTYPE_OPEN_SYSTEM)
	b, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = r.gen.Execute(genetlink.Message{Header: genetlink.Header{Command: unix.NL80211_CMD_CONNECT, Version: r.fam.Version}, Data: b},
		r.fam.ID, netlink.Request|netlink.Acknowledge)
	return err
}

func (r *nlRadio) Disconnect(ifname string) error {
	i, err := r.iface(ifname)
	if err != nil {
		return err
	}
	return r.c.Disconnect(i)
}

// Link is the network the interface is associated with and its signal.
func (r *nlRadio) Link(ifname string) (link, error) {
	i, err := r.iface(ifname)
	if err != nil {
		return link{}, err
	}
	bss, err := r.c.BSS(i)
	if err != nil || bss == nil || bss.Status != wifi.BSSStatusAssociated {
		return link{}, nil // not associated (nl80211 answers ENOENT-like errors then)
	}
	l := link{Up: true, SSID: bss.SSID, SignalDBm: int(bss.Signal / 100)}
	if st, err := r.c.StationInfo(i); err == nil && len(st) > 0 {
		l.SignalDBm = st[0].Signal
	}
	return l, nil
}
