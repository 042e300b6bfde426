package main

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// A small DHCPv4 client (RFC 2131), best effort: for every wired interface it
// brings the link up and asks for an address, a default route and name
// servers, renews at half the lease, and retries with backoff when nobody
// answers. It never blocks the boot: clawedge works offline.

const (
	bootRequest = 1
	bootReply   = 2

	dhcpDiscover = 1
	dhcpOffer    = 2
	dhcpRequest  = 3
	dhcpAck      = 5
	dhcpNak      = 6

	optSubnetMask = 1
	optRouter     = 3
	optDNS        = 6
	optNTP        = 42
	optRequestIP  = 50
	optLease      = 51
	optMsgType    = 53
	optServerID   = 54
	optParamList  = 55
	optEnd        = 255
)

var magicCookie = []byte{99, 130, 83, 99}

// dhcpMsg is the part of a DHCP message the client uses.
type dhcpMsg struct {
	op      byte
	xid     uint32
	yiaddr  net.IP
	mac     net.HardwareAddr
	msgType byte
	opts    map[byte][]byte
}

// encode builds a client message; opts are written in ascending order.
func (m dhcpMsg) encode() []byte {
	b := make([]byte, 240, 300)
	b[0], b[1], b[2] = m.op, 1, 6 // Ethernet, 6-byte addresses
	binary.BigEndian.PutUint32(b[4:], m.xid)
	// Ask for broadcast replies: without an address yet, the kernel drops
	// unicast IP sent to the offered one.
	binary.BigEndian.PutUint16(b[10:], 0x8000)
	copy(b[28:44], m.mac)
	copy(b[236:240], magicCookie)
	b = append(b, optMsgType, 1, m.msgType)
	for code := 1; code < 255; code++ {
		if v, ok := m.opts[byte(code)]; ok && code != optMsgType {
			b = append(b, byte(code), byte(len(v)))
			b = append(b, v...)
		}
	}
	b = append(b, optEnd)
	for len(b) < 300 { // some servers ignore BOOTP-short packets
		b = append(b, 0)
	}
	return b
}

func parseDHCP(b []byte) (dhcpMsg, error) {
	if len(b) < 240 || string(b[236:240]) != string(magicCookie) {
		return dhcpMsg{}, errors.New("not a DHCP message")
	}
	m := dhcpMsg{op: b[0], xid: binary.BigEndian.Uint32(b[4:]), yiaddr: net.IP(append([]byte(nil), b[16:20]...)),
		mac: net.HardwareAddr(append([]byte(nil), b[28:34]...)), opts: map[byte][]byte{}}
	for i := 240; i < len(b); {
		code := b[i]
		if code == optEnd {
			break
		}
		if code == 0 { // pad
			i++
			continue
		}
		if i+1 >= len(b) || i+2+int(b[i+1]) > len(b) {
			return dhcpMsg{}, errors.New("truncated option")
		}
		m.opts[code] = b[i+2 : i+2+int(b[i+1])]
		i += 2 + int(b[i+1])
	}
	if t := m.opts[optMsgType]; len(t) == 1 {
		m.msgType = t[0]
	}
	return m, nil
}

// lease is what an ACK grants.
type lease struct {
	ip, mask, router net.IP
	dns, ntp         []net.IP
	duration         time.Duration
	server           net.IP
}

func leaseFrom(m dhcpMsg) lease {
	l := lease{ip: m.yiaddr, mask: net.IP(m.opts[optSubnetMask]), server: net.IP(m.opts[optServerID]), duration: time.Hour}
	if r := m.opts[optRouter]; len(r) >= 4 {
		l.router = net.IP(r[:4])
	}
	for i := 0; i+4 <= len(m.opts[optDNS]); i += 4 {
		l.dns = append(l.dns, net.IP(m.opts[optDNS][i:i+4]))
	}
	for i := 0; i+4 <= len(m.opts[optNTP]); i += 4 {
		l.ntp = append(l.ntp, net.IP(m.opts[optNTP][i:i+4]))
	}
	if d := m.opts[optLease]; len(d) == 4 {
		l.duration = time.Duration(binary.BigEndian.Uint32(d)) * time.Second
	}
	if len(l.mask) != 4 {
		l.mask = net.IP(net.CIDRMask(24, 32))
	}
	return l
}

// dhcpAll starts a client for each wired interface: those present at boot
// and any that appears later. A USB Ethernet adapter (the Pi 3 B's own
// LAN9514 too, and QEMU's usb-net) may enumerate after init has started, and
// one plugged in later must work as well: the kernel's link messages
// (RTMGRP_LINK) trigger a rescan. Wi-Fi interfaces (wl*) get theirs from the
// Wi-Fi loop once a network is joined (wifiloop.go): before that, DHCP on
// them could only time out.
func dhcpAll() {
	events := make(chan struct{}, 1)
	go linkEvents(events)
	watchWired("/sys/class/net", events, func(name string, done func()) {
		go func() { dhcpLoop(name); done() }()
	})
}

// watchWired calls start once for each wired interface under sysClassNet,
// scanning at first and after each event until events is closed; start
// calls done when its client has ended (the interface went away), so that
// the interface is started again when it is back.
func watchWired(sysClassNet string, events <-chan struct{}, start func(name string, done func())) {
	var mu sync.Mutex
	running := map[string]bool{}
	for {
		for _, name := range wiredInterfaces(sysClassNet) {
			mu.Lock()
			busy := running[name]
			running[name] = true
			mu.Unlock()
			if !busy {
				start(name, func() { mu.Lock(); delete(running, name); mu.Unlock() })
			}
		}
		if _, ok := <-events; !ok {
			return
		}
	}
}

// wiredInterfaces lists the Ethernet-type interfaces (ARPHRD_ETHER: eth*,
// usb0 of a CDC or RNDIS gadget, en*) other than Wi-Fi's, sorted.
func wiredInterfaces(sysClassNet string) []string {
	ifs, _ := os.ReadDir(sysClassNet)
	var out []string
	for _, e := range ifs {
		name := e.Name()
		typ, _ := os.ReadFile(filepath.Join(sysClassNet, name, "type"))
		if name == "lo" || strings.TrimSpace(string(typ)) != "1" || strings.HasPrefix(name, "wl") {
			continue
		}
		out = append(out, name)
	}
	return out
}

// rtmgrpLink is <linux/rtnetlink.h>'s RTMGRP_LINK (the syscall package
// lacks it).
const rtmgrpLink = 0x1

// linkEvents sends on events (without blocking: one pending is enough)
// whenever the kernel reports a link added, changed or removed.
func linkEvents(events chan<- struct{}) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_RAW|syscall.SOCK_CLOEXEC, syscall.NETLINK_ROUTE)
	if err != nil {
		logf("link events: %v; only interfaces present at boot get DHCP", err)
		return
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK, Groups: rtmgrpLink}); err != nil {
		logf("link events: %v; only interfaces present at boot get DHCP", err)
		return
	}
	b := make([]byte, 16<<10)
	for {
		if _, _, err := syscall.Recvfrom(fd, b, 0); err != nil && err != syscall.EINTR && err != syscall.ENOBUFS {
			logf("link events: %v", err)
			return
		}
		select {
		case events <- struct{}{}:
		default:
		}
	}
}

// dhcpLoop keeps a lease on ifname; it returns when the interface is gone.
func dhcpLoop(ifname string) {
	if err := ifUp(ifname); err != nil {
		logf("%s: %v", ifname, err)
		return
	}
	backoff := 2 * time.Second
	for {
		l, err := dhcpOnce(ifname)
		if err != nil {
			if _, gone := net.InterfaceByName(ifname); gone != nil {
				return
			}
			time.Sleep(backoff)
			backoff = min(backoff*2, time.Minute)
			continue
		}
		backoff = 2 * time.Second
		if err := apply(ifname, l); err != nil {
			logf("%s: configuring %v: %v", ifname, l.ip, err)
		} else {
			logf("%s: %v/%d via %v (DHCP, %v lease)", ifname, l.ip, maskBits(l.mask), l.router, l.duration)
			go syncTime(l.ntp)
		}
		time.Sleep(max(l.duration/2, 30*time.Second))
	}
}

func maskBits(m net.IP) int { ones, _ := net.IPMask(m.To4()).Size(); return ones }

// dhcpOnce runs DISCOVER, OFFER, REQUEST, ACK on ifname.
func dhcpOnce(ifname string) (lease, error) {
	iface, err := net.InterfaceByName(ifname)
	if err != nil {
		return lease{}, err
	}
	fd, err := dhcpSocket(ifname)
	if err != nil {
		return lease{}, err
	}
	defer syscall.Close(fd)
	var x [4]byte
	rand.Read(x[:])
	xid := binary.BigEndian.Uint32(x[:])
	params := []byte{optSubnetMask, optRouter, optDNS, optNTP, optLease}
	disc := dhcpMsg{op: bootRequest, xid: xid, mac: iface.HardwareAddr, msgType: dhcpDiscover, opts: map[byte][]byte{optParamList: params}}
	offer, err := exchange(fd, disc, dhcpOffer)
	if err != nil {
		return lease{}, err
	}
	req := dhcpMsg{op: bootRequest, xid: xid, mac: iface.HardwareAddr, msgType: dhcpRequest, opts: map[byte][]byte{
		optParamList: params, optRequestIP: offer.yiaddr.To4(), optServerID: offer.opts[optServerID]}}
	ack, err := exchange(fd, req, dhcpAck)
	if err != nil {
		return lease{}, err
	}
	return leaseFrom(ack), nil
}

func exchange(fd int, m dhcpMsg, want byte) (dhcpMsg, error) {
	to := &syscall.SockaddrInet4{Port: 67, Addr: [4]byte{255, 255, 255, 255}}
	if err := syscall.Sendto(fd, m.encode(), 0, to); err != nil {
		return dhcpMsg{}, err
	}
	buf := make([]byte, 1500)
	deadline := time.Now().Add(4 * time.Second)
	for time.Now().Before(deadline) {
		n, _, err := syscall.Recvfrom(fd, buf, 0)
		if err != nil {
			if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
				continue
			}
			return dhcpMsg{}, err
		}
		r, err := parseDHCP(buf[:n])
		if err != nil || r.op != bootReply || r.xid != m.xid {
			continue
		}
		if r.msgType == dhcpNak {
			return dhcpMsg{}, errors.New("DHCP NAK")
		}
		if r.msgType == want {
			return r, nil
		}
	}
	return dhcpMsg{}, errors.New("no DHCP answer")
}

// dhcpSocket is a UDP socket on port 68 bound to ifname, able to broadcast
// before the interface has an address.
func dhcpSocket(ifname string) (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.IPPROTO_UDP)
	if err != nil {
		return -1, err
	}
	for _, o := range [][2]int{{syscall.SO_REUSEADDR, 1}, {syscall.SO_BROADCAST, 1}} {
		syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, o[0], o[1])
	}
	tv := syscall.Timeval{Sec: 1}
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv)
	if err := syscall.BindToDevice(fd, ifname); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: 68}); err != nil {
		syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// ifreqAddr is struct ifreq with a struct sockaddr_in in the union.
type ifreqAddr struct {
	name [syscall.IFNAMSIZ]byte
	addr syscall.RawSockaddrInet4
	_    [8]byte
}

// rtentry is struct rtentry of <net/route.h>, for SIOCADDRT.
type rtentry struct {
	pad1    uintptr
	dst     syscall.RawSockaddrInet4
	gateway syscall.RawSockaddrInet4
	genmask syscall.RawSockaddrInet4
	flags   uint16
	pad2    int16
	pad3    uintptr
	pad4    uintptr
	metric  int16
	dev     *byte
	mtu     uintptr
	window  uintptr
	irtt    uint16
}

func sockaddr(ip net.IP) syscall.RawSockaddrInet4 {
	sa := syscall.RawSockaddrInet4{Family: syscall.AF_INET}
	copy(sa.Addr[:], ip.To4())
	return sa
}

// apply sets the address, netmask, default route and name servers of a lease.
func apply(ifname string, l lease) error {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	for _, s := range []struct {
		req uintptr
		ip  net.IP
	}{{syscall.SIOCSIFADDR, l.ip}, {syscall.SIOCSIFNETMASK, l.mask}} {
		var r ifreqAddr
		copy(r.name[:], ifname)
		r.addr = sockaddr(s.ip)
		if err := ioctl(fd, s.req, unsafe.Pointer(&r)); err != nil {
			return fmt.Errorf("ioctl %#x: %w", s.req, err)
		}
	}
	if l.router != nil {
		rt := rtentry{dst: sockaddr(net.IPv4zero), gateway: sockaddr(l.router), genmask: sockaddr(net.IPv4zero),
			flags: syscall.RTF_UP | syscall.RTF_GATEWAY}
		if err := ioctl(fd, syscall.SIOCADDRT, unsafe.Pointer(&rt)); err != nil && !errors.Is(err, syscall.EEXIST) {
			return fmt.Errorf("default route: %w", err)
		}
	}
	if len(l.dns) > 0 {
		var sb strings.Builder
		for _, d := range l.dns {
			fmt.Fprintf(&sb, "nameserver %v\n", d)
		}
		return writeAtomic("/run/resolv.conf", []byte(sb.String()), 0o644)
	}
	return nil
}
