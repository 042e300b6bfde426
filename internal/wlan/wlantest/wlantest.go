// Package wlantest is a fake Wi-Fi radio that answers as nl80211 would.
package wlantest

import (
	"errors"

	"github.com/clawedge/clawedge/internal/wlan"
)

// Radio answers as nl80211 would for the networks in Joinable (SSID to
// signal in dBm); any other network never associates, and "Refused" is
// refused at connect. It records what it was asked.
type Radio struct {
	Ifs       []string
	Joinable  map[string]int
	Cur       string // the network joined, "" for none
	Connects  []string
	Countries []string
	PMKs      map[string][32]byte
}

func (f *Radio) Interfaces() ([]string, error) { return f.Ifs, nil }

func (f *Radio) SetCountry(c string) error {
	f.Countries = append(f.Countries, c)
	return nil
}

func (f *Radio) Disconnect(string) error { f.Cur = ""; return nil }

func (f *Radio) Connect(_, ssid string, pmk [32]byte) error {
	f.Connects = append(f.Connects, ssid)
	if f.PMKs == nil {
		f.PMKs = map[string][32]byte{}
	}
	f.PMKs[ssid] = pmk
	if ssid == "Refused" {
		return errors.New("operation not supported")
	}
	if _, ok := f.Joinable[ssid]; ok {
		f.Cur = ssid
	}
	return nil
}

func (f *Radio) Link(string) (wlan.Link, error) {
	if f.Cur == "" {
		return wlan.Link{}, nil
	}
	return wlan.Link{Up: true, SSID: f.Cur, SignalDBm: f.Joinable[f.Cur]}, nil
}
