package packaging

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/config"
)

// unit parses a systemd unit file into section -> key -> values (a key may
// repeat, like DeviceAllow=).
func unit(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s:%d: not a key=value in a section: %q", path, n, line)
			}
			u[section][k] = append(u[section][k], v)
		}
	}
	return u
}

func TestUnitFile(t *testing.T) {
	u := unit(t, "clawedge.service")
	svc := u["Service"]
	want := map[string]string{
		"Type":                  "notify", // clawedge run sends READY=1 (cmd/clawedge/sdnotify.go)
		"NotifyAccess":          "main",
		"User":                  "clawedge",
		"StateDirectory":        "clawedge",
		"WorkingDirectory":      "/var/lib/clawedge",
		"ExecStart":             "/usr/bin/clawedge run --config /etc/clawedge/config.yaml",
		"Restart":               "on-failure",
		"StandardError":         "journal",
		"SyslogIdentifier":      "clawedge",
		"DevicePolicy":          "closed",
		"NoNewPrivileges":       "yes",
		"ProtectSystem":         "strict",
		"SystemCallFilter":      "@system-service",
		"CapabilityBoundingSet": "",
	}
	for k, v := range want {
		if got := svc[k]; len(got) != 1 || got[0] != v {
			t.Errorf("[Service] %s = %q, want %q", k, got, v)
		}
	}
	if w := svc["WatchdogSec"]; len(w) != 1 || w[0] == "" || w[0] == "0" {
		t.Errorf("WatchdogSec = %q: the watchdog clawedge feeds must be on", w)
	}
	// PrivateDevices=yes would hide /dev/gpiochip* and the serial ports.
	if v := svc["PrivateDevices"]; len(v) > 0 && v[0] == "yes" {
		t.Error("PrivateDevices=yes hides the GPIO chips and serial ports")
	}
	allowed := strings.Join(svc["DeviceAllow"], "|")
	for _, dev := range []string{"char-gpiochip rw", "char-ttyS rw", "char-ttyAMA rw", "char-ttyUSB rw", "char-ttyACM rw", "char-i2c rw"} {
		if !strings.Contains(allowed, dev) {
			t.Errorf("DeviceAllow lacks %q (have %s)", dev, allowed)
		}
	}
	if got := u["Install"]["WantedBy"]; len(got) != 1 || got[0] != "multi-user.target" {
		t.Errorf("WantedBy = %q", got)
	}
	// systemd's own checker, where there is one (it needs the binary to exist,
	// so only the syntax errors it reports are fatal).
	if sa, err := exec.LookPath("systemd-analyze"); err == nil {
		out, _ := exec.Command(sa, "verify", "--man=no", "clawedge.service").CombinedOutput()
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, "Unknown key") || strings.Contains(l, "Unknown section") || strings.Contains(l, "Failed to parse") {
				t.Errorf("systemd-analyze verify: %s", l)
			}
		}
	}
}

func TestDefaultConfigIsValid(t *testing.T) {
	data, err := os.ReadFile("config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, driver := range []string{"sim", "periph"} { // deb.sh switches arm builds to periph
		d := bytes.Replace(data, []byte("\n  driver: sim\n"), []byte("\n  driver: "+driver+"\n"), 1)
		if driver != "sim" && bytes.Equal(d, data) {
			t.Fatal("config.yaml has no `  driver: sim` line for deb.sh to switch")
		}
		cfg, err := config.Parse(d, "config.yaml", func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("driver %s: %v", driver, err)
		}
		if cfg.DataDir != "/var/lib/clawedge" || cfg.ConsoleStdin() || cfg.Board.Driver != driver {
			t.Errorf("driver %s: data_dir %q, stdin %v, driver %q", driver, cfg.DataDir, cfg.ConsoleStdin(), cfg.Board.Driver)
		}
	}
}

func TestMaintainerScripts(t *testing.T) {
	for _, s := range []string{"postinst", "prerm", "postrm"} {
		p := filepath.Join("deb", s)
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", p)
		}
		if out, err := exec.Command("sh", "-n", p).CombinedOutput(); err != nil {
			t.Errorf("sh -n %s: %v\n%s", p, err, out)
		}
	}
	post, _ := os.ReadFile("deb/postinst")
	for _, g := range []string{"gpio", "dialout", "i2c"} {
		if !strings.Contains(string(post), g) {
			t.Errorf("postinst does not put the clawedge user in %s", g)
		}
	}
}

// TestDeb builds a package around a stand-in binary with scripts/deb.sh and
// reads it back with dpkg-deb.
func TestDeb(t *testing.T) {
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		t.Skip("no dpkg-deb")
	}
	if runtime.GOOS != "linux" {
		t.Skip("linux only")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "clawedge")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho stand-in\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("../scripts/deb.sh", "arm64")
	cmd.Env = append(os.Environ(), "BIN="+bin, "OUT="+dir, "VERSION=v1.2.3", "NO_LINTIAN=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deb.sh: %v\n%s", err, out)
	}
	deb := filepath.Join(dir, "clawedge_1.2.3_arm64.deb")
	info, err := exec.Command("dpkg-deb", "--info", deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg-deb --info: %v\n%s", err, info)
	}
	for _, want := range []string{"Package: clawedge", "Version: 1.2.3", "Architecture: arm64", "Depends: adduser", "conffiles", "postinst", "prerm", "postrm", "md5sums"} {
		if !strings.Contains(string(info), want) {
			t.Errorf("dpkg-deb --info lacks %q:\n%s", want, info)
		}
	}
	field := func(name string) string {
		out, err := exec.Command("dpkg-deb", "--field", deb, name).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	if field("Package") != "clawedge" {
		t.Error("Package field")
	}
	cts, err := exec.Command("dpkg-deb", "--contents", deb).Output()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{} // path -> "mode owner"
	for _, l := range strings.Split(strings.TrimSpace(string(cts)), "\n") {
		f := strings.Fields(l)
		if len(f) < 6 {
			continue
		}
		files[strings.TrimPrefix(f[5], ".")] = f[0] + " " + f[1]
	}
	for path, want := range map[string]string{
		"/usr/bin/clawedge":                     "-rwxr-xr-x root/root",
		"/etc/clawedge/config.yaml":             "-rw-r--r-- root/root",
		"/lib/systemd/system/clawedge.service":  "-rw-r--r-- root/root",
		"/usr/share/doc/clawedge/copyright":     "-rw-r--r-- root/root",
		"/usr/share/doc/clawedge/changelog.gz":  "-rw-r--r-- root/root",
		"/usr/share/lintian/overrides/clawedge": "-rw-r--r-- root/root",
	} {
		if got := files[path]; got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	extract := t.TempDir()
	if out, err := exec.Command("dpkg-deb", "--raw-extract", deb, extract).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cf, _ := os.ReadFile(filepath.Join(extract, "DEBIAN/conffiles"))
	if strings.TrimSpace(string(cf)) != "/etc/clawedge/config.yaml" {
		t.Errorf("conffiles = %q", cf)
	}
	cfg, _ := os.ReadFile(filepath.Join(extract, "etc/clawedge/config.yaml"))
	if !strings.Contains(string(cfg), "\n  driver: periph\n") {
		t.Error("the arm64 package's config does not use the periph driver")
	}
	unitInDeb, _ := os.ReadFile(filepath.Join(extract, "lib/systemd/system/clawedge.service"))
	unitHere, _ := os.ReadFile("clawedge.service")
	if !bytes.Equal(unitInDeb, unitHere) {
		t.Error("the packaged unit differs from packaging/clawedge.service")
	}
}
