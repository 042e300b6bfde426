package main

import (
	"time"

	"github.com/clawedge/clawedge/internal/wlan"
)

// radio is what the Wi-Fi loop needs of nl80211 (wlan.Radio; a
// wlantest.Radio in the tests).
type radio interface {
	wlan.Reader
	SetCountry(code string) error
	Connect(ifname, ssid string, pmk [32]byte) error
	Disconnect(ifname string) error
}

const (
	wifiRadioWait  = 10               // seconds to wait for the interface: it appears once the firmware is up
	wifiJoinPolls  = 15               // one-second looks for the association after a connect
	wifiWatch      = 10 * time.Second // how often a joined link is checked
	wifiBackoffMin = 2 * time.Second
	wifiBackoffMax = 5 * time.Minute
)

// wifiLoop joins the first configured network that answers, in priority
// order, starts DHCP on the interface once, watches the link and joins
// again when it is lost, waiting longer (doubling, to 5 minutes) after each
// round in which no network could be joined.
type wifiLoop struct {
	r    radio
	nets []wifiNetwork
	// sleep waits; false means stop (the tests end the loop through it).
	sleep func(time.Duration) bool
	logf  func(format string, args ...any)
	// up starts DHCP on the interface: called once, at the first join
	// (DHCP renews the lease by itself across reconnects).
	up func(ifname string)
}

func (w *wifiLoop) run() {
	var ifname string
	for i := 0; ; i++ {
		if ifs, _ := w.r.Interfaces(); len(ifs) > 0 {
			ifname = ifs[0]
			break
		}
		if i == wifiRadioWait {
			w.logf("%s", wifiStatus(w.nets, nil))
			return
		}
		if !w.sleep(time.Second) {
			return
		}
	}
	w.logf("%s", wifiStatus(w.nets, []string{ifname}))
	backoff, dhcp := wifiBackoffMin, false
	for {
		l, n, ok := w.join(ifname)
		if !ok {
			w.logf("wifi: %s: none of %d network(s) joined; next try in %v", ifname, len(w.nets), backoff)
			if !w.sleep(backoff) {
				return
			}
			backoff = min(backoff*2, wifiBackoffMax)
			continue
		}
		backoff = wifiBackoffMin
		w.logf("wifi: %s: joined %s, signal %d dBm", ifname, n, l.SignalDBm)
		if !dhcp {
			dhcp = true
			w.up(ifname)
		}
		for {
			if !w.sleep(wifiWatch) {
				return
			}
			if l, err := w.r.Link(ifname); err != nil || !l.Up || l.SSID != n.SSID {
				w.logf("wifi: %s: lost %q; joining again", ifname, n.SSID)
				break
			}
		}
	}
}

// join tries each network in priority order and returns the first joined.
func (w *wifiLoop) join(ifname string) (wlan.Link, wifiNetwork, bool) {
	for _, n := range w.nets {
		if err := w.r.SetCountry(n.Country); err != nil {
			w.logf("wifi: setting the country %s: %v", n.Country, err)
		}
		w.r.Disconnect(ifname) // an error here only means there was nothing to leave
		if err := w.r.Connect(ifname, n.SSID, n.PMK); err != nil {
			w.logf("wifi: %s: connecting to %s: %v", ifname, n, err)
			continue
		}
		for range wifiJoinPolls {
			if !w.sleep(time.Second) {
				return wlan.Link{}, n, false
			}
			if l, err := w.r.Link(ifname); err == nil && l.Up && l.SSID == n.SSID {
				return l, n, true
			}
		}
		w.logf("wifi: %s: %s not joined within %d s", ifname, n, wifiJoinPolls)
	}
	return wlan.Link{}, wifiNetwork{}, false
}

// startWifi runs the Wi-Fi loop over nl80211 in the background.
func startWifi(nets []wifiNetwork) {
	r, err := wlan.Open()
	if err != nil {
		logf("wifi: nl80211: %v; Ethernet only", err)
		return
	}
	w := &wifiLoop{r: r, nets: nets, logf: logf,
		sleep: func(d time.Duration) bool { time.Sleep(d); return true },
		up:    func(ifname string) { go dhcpLoop(ifname) }}
	go w.run()
}
