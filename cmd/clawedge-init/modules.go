package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The Pi's Wi-Fi driver, brcmfmac, is a module in the gokrazy kernel (cfg80211
// and nl80211 are built in). The image carries the modules under
// /lib/modules/RELEASE and the firmware under /lib/firmware
// (scripts/image-wifi.sh); there is no modprobe, so init loads them itself,
// in dependency order. They are loaded on every board: without an SDIO
// radio (QEMU, a Pi 2) brcmfmac simply binds to nothing.
const modulesRoot = "/lib/modules"

var wifiModules = []string{"brcmutil", "brcmfmac", "brcmfmac-wcc", "brcmfmac-cyw"}

// loadWifiModules loads the Wi-Fi modules and asks nl80211 for its generic
// netlink family, and returns the console line saying how that went.
func loadWifiModules(root string) string {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return fmt.Sprintf("wifi: uname: %v", err)
	}
	dir := filepath.Join(root, unix.ByteSliceToString(uts.Release[:]))
	// brcmfmac asks the kernel for its firmware-vendor module (brcmfmac-wcc
	// or -cyw) when a radio's firmware is up, which runs the modprobe helper:
	// that is us (modprobeHelper), since the image has no modprobe.
	if err := os.WriteFile("/proc/sys/kernel/modprobe", []byte("/sbin/init"), 0); err != nil {
		logf("wifi: setting the modprobe helper: %v", err)
	}
	for _, m := range wifiModules {
		if err := loadModule(dir, m); err != nil {
			return fmt.Sprintf("wifi: %v; Wi-Fi is off, Ethernet only", err)
		}
	}
	id, err := genlFamily("nl80211")
	if err != nil {
		return fmt.Sprintf("wifi: modules %s loaded, but nl80211 does not answer: %v", strings.Join(wifiModules, " "), err)
	}
	return fmt.Sprintf("wifi: modules %s loaded; nl80211 answers (generic netlink family %d)", strings.Join(wifiModules, " "), id)
}

// loadModule loads NAME.ko from under dir; already loaded is fine.
func loadModule(dir, name string) error {
	path, err := findModule(dir, name)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), "", 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	return nil
}

// findModule finds NAME.ko under dir (module names treat - and _ alike).
func findModule(dir, name string) (string, error) {
	want := strings.ReplaceAll(name, "_", "-") + ".ko"
	var found string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.ReplaceAll(d.Name(), "_", "-") == want {
			found = p
			return filepath.SkipAll
		}
		return nil
	})
	if found == "" {
		return "", fmt.Errorf("module %s: no %s under %s", name, want, dir)
	}
	return found, nil
}

// modprobeHelper is what the kernel runs as `modprobe -q -- NAME` (see
// loadWifiModules): it loads NAME if it is one of the image's modules, and
// fails quietly for anything else (the kernel asks for many optional ones).
func modprobeHelper(name string) int {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return 1
	}
	if err := loadModule(filepath.Join(modulesRoot, unix.ByteSliceToString(uts.Release[:])), name); err != nil {
		return 1
	}
	return 0
}

// genlFamily asks the kernel's generic netlink controller for the id of a
// family: answering at all shows that, for nl80211, cfg80211 is there.
func genlFamily(name string) (uint16, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_GENERIC)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	tv := unix.Timeval{Sec: 2}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return 0, err
	}
	if err := unix.Sendto(fd, genlGetFamily(name), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, err
	}
	buf := make([]byte, 16384)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return 0, err
	}
	return parseFamilyID(buf[:n])
}

// genlGetFamily is a CTRL_CMD_GETFAMILY request naming the family.
func genlGetFamily(name string) []byte {
	attrLen := unix.SizeofNlAttr + len(name) + 1
	msg := make([]byte, unix.NLMSG_HDRLEN+unix.GENL_HDRLEN+(attrLen+3)&^3)
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:], uint32(len(msg)))
	ne.PutUint16(msg[4:], unix.GENL_ID_CTRL)
	ne.PutUint16(msg[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(msg[8:], 1) // sequence number
	msg[16] = unix.CTRL_CMD_GETFAMILY
	msg[17] = 1 // version
	a := msg[unix.NLMSG_HDRLEN+unix.GENL_HDRLEN:]
	ne.PutUint16(a[0:], uint16(attrLen))
	ne.PutUint16(a[2:], unix.CTRL_ATTR_FAMILY_NAME)
	copy(a[unix.SizeofNlAttr:], name)
	return msg
}

// parseFamilyID reads the family id out of the controller's answer, or the
// error the kernel sent instead (ENOENT: no such family).
func parseFamilyID(b []byte) (uint16, error) {
	ne := binary.NativeEndian
	if len(b) < unix.NLMSG_HDRLEN {
		return 0, fmt.Errorf("generic netlink: short answer (%d bytes)", len(b))
	}
	n := int(ne.Uint32(b[0:]))
	if n < unix.NLMSG_HDRLEN || n > len(b) {
		return 0, fmt.Errorf("generic netlink: answer says %d bytes, has %d", n, len(b))
	}
	b = b[:n]
	if ne.Uint16(b[4:]) == unix.NLMSG_ERROR {
		if len(b) < unix.NLMSG_HDRLEN+4 {
			return 0, errors.New("generic netlink: short error answer")
		}
		return 0, unix.Errno(-int32(ne.Uint32(b[unix.NLMSG_HDRLEN:])))
	}
	if len(b) < unix.NLMSG_HDRLEN+unix.GENL_HDRLEN {
		return 0, errors.New("generic netlink: answer without a genl header")
	}
	for a := b[unix.NLMSG_HDRLEN+unix.GENL_HDRLEN:]; len(a) >= unix.SizeofNlAttr; {
		l := int(ne.Uint16(a[0:]))
		if l < unix.SizeofNlAttr || l > len(a) {
			return 0, fmt.Errorf("generic netlink: attribute of %d bytes in %d", l, len(a))
		}
		if ne.Uint16(a[2:])&^unix.NLA_F_NESTED == unix.CTRL_ATTR_FAMILY_ID && l >= unix.SizeofNlAttr+2 {
			return ne.Uint16(a[unix.SizeofNlAttr:]), nil
		}
		a = a[min((l+3)&^3, len(a)):]
	}
	return 0, errors.New("generic netlink: answer without a family id")
}
