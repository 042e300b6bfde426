// Package wlan is the board's Wi-Fi radio over nl80211: clawedge-init joins
// networks through it, and clawedge reads, without privilege, whether and
// where the board is joined for status and doctor. It never sees a
// passphrase: connects take the pairwise master key, and reading returns
// only the network's name and signal.
package wlan

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Link is an interface's association: the network and its signal.
type Link struct {
	Up        bool
	SSID      string
	SignalDBm int
}

// Reader is what reading the state needs: Radio, or wlantest.Radio in tests.
type Reader interface {
	Interfaces() ([]string, error) // station interfaces, e.g. wlan0
	Link(ifname string) (Link, error)
}

// Want is the interface a Pi's radio appears as: the one a status line
// names when there is none.
const Want = "wlan0"

// State is what is known of the board's Wi-Fi at one moment.
type State struct {
	// Iface is the station interface, "" when there is no radio; Absent
	// then says why.
	Iface  string
	Absent string
	Link   Link
	// Err is why the link could not be read.
	Err error
}

// Read asks r for the first station interface and its link. openErr is why
// nl80211 could not be opened (r is then not used).
func Read(r Reader, openErr error) State {
	if openErr != nil {
		if errors.Is(openErr, os.ErrNotExist) {
			return State{Absent: "no nl80211: no Wi-Fi driver loaded"}
		}
		return State{Absent: "nl80211: " + openErr.Error()}
	}
	ifs, err := r.Interfaces()
	if err != nil {
		return State{Absent: "nl80211: " + err.Error()}
	}
	if len(ifs) == 0 {
		return State{Absent: Want + " absent"}
	}
	s := State{Iface: ifs[0]}
	s.Link, s.Err = r.Link(s.Iface)
	return s
}

// Current reads the state of this machine's radio.
func Current() State {
	r, err := Open()
	if err != nil {
		return Read(nil, err)
	}
	defer r.Close()
	return Read(r, nil)
}

// Joined reports whether the board is on a Wi-Fi network.
func (s State) Joined() bool { return s.Iface != "" && s.Err == nil && s.Link.Up }

// Line is the status line, given the SSIDs network.wifi configures:
//
//	wifi: no radio (wlan0 absent)
//	wifi: wlan0 joined "Home", signal -52 dBm
//	wifi: wlan0 not joined (configured: "Home", "Phone")
//
// SSIDs are quoted: a network's name may hold any byte.
func (s State) Line(configured []string) string {
	conf := "none configured in network.wifi"
	if len(configured) > 0 {
		q := make([]string, len(configured))
		for i, c := range configured {
			q[i] = fmt.Sprintf("%q", c)
		}
		conf = "configured: " + strings.Join(q, ", ")
	}
	switch {
	case s.Iface == "" && len(configured) == 0:
		return fmt.Sprintf("wifi: no radio (%s)", s.Absent)
	case s.Iface == "":
		return fmt.Sprintf("wifi: no radio (%s); %s", s.Absent, conf)
	case s.Err != nil:
		return fmt.Sprintf("wifi: %s: reading the link: %v", s.Iface, s.Err)
	case s.Link.Up:
		return fmt.Sprintf("wifi: %s joined %q, signal %d dBm", s.Iface, s.Link.SSID, s.Link.SignalDBm)
	}
	return fmt.Sprintf("wifi: %s not joined (%s)", s.Iface, conf)
}
