package main

import (
	"encoding/binary"
	"errors"
	"net"
	"syscall"
	"time"
)

// syncTime sets the clock from the first NTP server that answers (SNTP, RFC
// 4330): the DHCP-provided ones, then pool.ntp.org. A Pi has no clock that
// runs while it is off; the audit trail wants the real time.
func syncTime(servers []net.IP) {
	addrs := make([]string, 0, len(servers)+1)
	for _, s := range servers {
		addrs = append(addrs, net.JoinHostPort(s.String(), "123"))
	}
	addrs = append(addrs, "pool.ntp.org:123")
	for _, a := range addrs {
		t, err := sntp(a, 3*time.Second)
		if err != nil {
			continue
		}
		tv := syscall.NsecToTimeval(t.UnixNano())
		if err := syscall.Settimeofday(&tv); err == nil {
			logf("clock set to %s from %s", t.UTC().Format(time.RFC3339), a)
			setClockState("synced")
			saveClock()
		}
		return
	}
}

// ntpEpochOffset is the seconds from 1900 (NTP) to 1970 (Unix).
const ntpEpochOffset = 2208988800

// sntp asks one server for the time, corrected by half the round trip.
func sntp(addr string, timeout time.Duration) (time.Time, error) {
	c, err := net.DialTimeout("udp", addr, timeout)
	if err != nil {
		return time.Time{}, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	req := make([]byte, 48)
	req[0] = 0x23 // version 4, mode 3 (client)
	sent := time.Now()
	if _, err := c.Write(req); err != nil {
		return time.Time{}, err
	}
	resp := make([]byte, 48)
	n, err := c.Read(resp)
	if err != nil {
		return time.Time{}, err
	}
	return parseSNTP(resp[:n], time.Since(sent))
}

func parseSNTP(b []byte, rtt time.Duration) (time.Time, error) {
	if len(b) < 48 {
		return time.Time{}, errors.New("short NTP reply")
	}
	if mode := b[0] & 7; mode != 4 {
		return time.Time{}, errors.New("not an NTP server reply")
	}
	if stratum := b[1]; stratum == 0 || stratum > 15 {
		return time.Time{}, errors.New("NTP server unsynchronised (kiss-of-death or stratum 16)")
	}
	sec := binary.BigEndian.Uint32(b[40:])
	frac := binary.BigEndian.Uint32(b[44:])
	t := time.Unix(int64(sec)-ntpEpochOffset, int64(frac)*1e9>>32)
	return t.Add(rtt / 2), nil
}
