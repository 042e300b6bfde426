package main

import (
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"
)

func TestNextBackoff(t *testing.T) {
	b := time.Duration(0)
	var got []time.Duration
	for range 7 {
		b = nextBackoff(b, time.Second) // crashing at once, again and again
		got = append(got, b)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Fatalf("backoffs %v, want %v seconds", got, want)
		}
	}
	if b := nextBackoff(30*time.Second, 2*time.Minute); b != time.Second {
		t.Errorf("after a long run the backoff is %v, want 1s", b)
	}
}

func TestDiskOf(t *testing.T) {
	d, err := diskOf("/sys/devices/platform/soc/3f202000.mmc/mmc_host/mmc0/mmc0:4567/block/mmcblk0/mmcblk0p2")
	if err != nil || d != "mmcblk0" {
		t.Errorf("diskOf = %q, %v", d, err)
	}
	if _, err := diskOf("/sys/devices/virtual/block/loop0"); err == nil {
		t.Error("a whole disk taken for a partition")
	}
}

func TestPartitionIn(t *testing.T) {
	sys := t.TempDir()
	for name, n := range map[string]string{"sda1": "1", "sda3": "3", "sda2": "2"} {
		os.MkdirAll(filepath.Join(sys, "sda", name), 0o755)
		os.WriteFile(filepath.Join(sys, "sda", name, "partition"), []byte(n+"\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(sys, "sda", "queue"), 0o755)
	if dev, err := partitionIn(sys, "sda", 3); err != nil || dev != "/dev/sda3" {
		t.Errorf("partition 3 = %q, %v", dev, err)
	}
	if _, err := partitionIn(sys, "sda", 4); err == nil {
		t.Error("found a partition 4")
	}
}

func TestDevNumbers(t *testing.T) {
	// mmcblk0p2 is 179:2; large minors use the high bits.
	if ma, mi := unixMajor(179<<8|2), unixMinor(179<<8|2); ma != 179 || mi != 2 {
		t.Errorf("179:2 decoded as %d:%d", ma, mi)
	}
	dev := uint64(259)<<8 | uint64(0x12345&0xff) | uint64(0x12345&^0xff)<<12
	if ma, mi := unixMajor(dev), unixMinor(dev); ma != 259 || mi != 0x12345 {
		t.Errorf("decoded as %d:%#x", ma, mi)
	}
}

func TestPickConfig(t *testing.T) {
	dir := t.TempDir()
	boot, perm, def := filepath.Join(dir, "boot.yaml"), filepath.Join(dir, "perm", "config.yaml"), filepath.Join(dir, "default.yaml")
	ok := func(string) ([]byte, error) { return nil, nil }
	bad := func(string) ([]byte, error) { return []byte("boot.yaml:3:1: unknown key"), errors.New("exit 1") }

	if got := pickConfigIn(boot, perm, def, ok); got != def {
		t.Errorf("nothing anywhere: %q, want the default", got)
	}
	os.WriteFile(boot, []byte("data_dir: ./a\n"), 0o644)
	if got := pickConfigIn(boot, perm, def, bad); got != def {
		t.Errorf("invalid boot config: %q, want the default", got)
	}
	if got := pickConfigIn(boot, perm, def, ok); got != perm {
		t.Errorf("valid boot config: %q, want it copied to %s", got, perm)
	}
	if b, _ := os.ReadFile(perm); string(b) != "data_dir: ./a\n" {
		t.Errorf("perm config = %q", b)
	}
	os.WriteFile(boot, []byte("data_dir: [\n"), 0o644)
	if got := pickConfigIn(boot, perm, def, bad); got != perm {
		t.Errorf("a bad new boot config: %q, want the last good one", got)
	}
	if b, _ := os.ReadFile(perm); string(b) != "data_dir: ./a\n" {
		t.Errorf("a bad boot config overwrote the good one: %q", b)
	}
	os.Remove(boot)
	if got := pickConfigIn(boot, perm, def, ok); got != perm {
		t.Errorf("boot config removed: %q, want the saved one", got)
	}
}

func TestDHCPRoundTrip(t *testing.T) {
	mac := net.HardwareAddr{0xb8, 0x27, 0xeb, 1, 2, 3}
	m := dhcpMsg{op: bootRequest, xid: 0xdeadbeef, mac: mac, msgType: dhcpRequest,
		opts: map[byte][]byte{optRequestIP: {192, 168, 1, 50}, optParamList: {1, 3, 6}}}
	b := m.encode()
	if len(b) < 300 || b[0] != 1 || b[1] != 1 || b[2] != 6 || binary.BigEndian.Uint16(b[10:]) != 0x8000 {
		t.Fatalf("header % x", b[:12])
	}
	got, err := parseDHCP(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.xid != m.xid || got.msgType != dhcpRequest || got.mac.String() != mac.String() ||
		net.IP(got.opts[optRequestIP]).String() != "192.168.1.50" {
		t.Errorf("parsed %+v", got)
	}
	if _, err := parseDHCP(b[:100]); err == nil {
		t.Error("parsed a truncated message")
	}
	bad := append([]byte(nil), b[:243]...)
	bad[240], bad[241] = optRouter, 200 // length past the end
	if _, err := parseDHCP(bad); err == nil {
		t.Error("parsed an option running past the end")
	}
}

func TestLeaseFrom(t *testing.T) {
	ack := dhcpMsg{yiaddr: net.IPv4(10, 0, 2, 15).To4(), opts: map[byte][]byte{
		optSubnetMask: {255, 255, 255, 0}, optRouter: {10, 0, 2, 2}, optDNS: {10, 0, 2, 3, 1, 1, 1, 1},
		optLease: {0, 0, 0x0e, 0x10}, optServerID: {10, 0, 2, 2}}}
	l := leaseFrom(ack)
	if l.ip.String() != "10.0.2.15" || maskBits(l.mask) != 24 || l.router.String() != "10.0.2.2" ||
		len(l.dns) != 2 || l.dns[1].String() != "1.1.1.1" || l.duration != time.Hour {
		t.Errorf("lease %+v", l)
	}
}

func TestParseSNTP(t *testing.T) {
	b := make([]byte, 48)
	b[0], b[1] = 0x24, 2 // version 4, server; stratum 2
	binary.BigEndian.PutUint32(b[40:], uint32(1_700_000_000+ntpEpochOffset))
	binary.BigEndian.PutUint32(b[44:], 1<<31) // half a second
	got, err := parseSNTP(b, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Unix(1_700_000_000, 600_000_000); !got.Equal(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	b[1] = 0
	if _, err := parseSNTP(b, 0); err == nil {
		t.Error("accepted a kiss-of-death reply")
	}
}

func TestSNTPAgainstLocalServer(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 48)
		_, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		r := make([]byte, 48)
		r[0], r[1] = 0x24, 1
		binary.BigEndian.PutUint32(r[40:], uint32(1_800_000_000+ntpEpochOffset))
		pc.WriteTo(r, from)
	}()
	got, err := sntp(pc.LocalAddr().String(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Sub(time.Unix(1_800_000_000, 0)); d < 0 || d > time.Second {
		t.Errorf("time %v", got)
	}
}

func TestKernelStructSizes(t *testing.T) {
	if s := unsafe.Sizeof(ifreqFlags{}); s != 40 {
		t.Errorf("ifreq (flags) is %d bytes, want 40", s)
	}
	if s := unsafe.Sizeof(ifreqAddr{}); s != 40 && unsafe.Sizeof(uintptr(0)) == 8 {
		t.Errorf("ifreq (addr) is %d bytes, want 40", s)
	}
	want := map[uintptr]uintptr{8: 120, 4: 68} // sizeof(struct rtentry) on LP64 and ILP32
	if s := unsafe.Sizeof(rtentry{}); s != want[unsafe.Sizeof(uintptr(0))] {
		t.Errorf("rtentry is %d bytes, want %d", s, want[unsafe.Sizeof(uintptr(0))])
	}
}

func TestItoa(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 42: "42", -3: "-3", 255: "255"} {
		if got := itoa(n); got != want {
			t.Errorf("itoa(%d) = %q", n, got)
		}
	}
}

// TestWatchWired: usb0 (QEMU's usb-net, a USB adapter) enumerating after
// the first scan gets DHCP once the kernel reports the link; Wi-Fi,
// loopback and non-Ethernet links never do; a running client is not
// started twice, and one that ended is started again.
func TestWatchWired(t *testing.T) {
	sys := t.TempDir()
	add := func(name, typ string) {
		os.MkdirAll(filepath.Join(sys, name), 0o755)
		os.WriteFile(filepath.Join(sys, name, "type"), []byte(typ+"\n"), 0o644)
	}
	add("eth0", "1")
	add("lo", "772")
	add("wlan0", "1")
	add("can0", "280")
	events := make(chan struct{})
	var started []string
	dones := map[string]func(){}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		watchWired(sys, events, func(name string, done func()) {
			started = append(started, name)
			dones[name] = done
		})
	}()
	events <- struct{}{} // the first scan is done once this is taken
	add("usb0", "1")
	events <- struct{}{}
	events <- struct{}{} // eth0 and usb0 still running: no new start
	dones["usb0"]()      // usb0's client ended (unplugged and back)
	events <- struct{}{}
	close(events)
	<-finished
	if got := strings.Join(started, " "); got != "eth0 usb0 usb0" {
		t.Errorf("started %q, want eth0 usb0 usb0", got)
	}
}
