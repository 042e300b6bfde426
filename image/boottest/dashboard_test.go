package boottest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/image/disk"
	"github.com/clawedge/clawedge/update"
)

// freeLocalAddr is a 127.0.0.1 address with a port nothing listens on now,
// for QEMU to forward.
func freeLocalAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// checkDashboard: the image serves the dashboard on its LAN by default. A
// code from /web at the serial console (the one console the image has, with
// no shell) pairs a client over the network, which then reads the pins (the
// led as the console's write left it) and loads the overview page. The page loads' times, through QEMU's emulated
// CPU, USB and network, are printed as WEB-PAGE: an upper bound of a load on
// a real board's loopback.
func checkDashboard(t *testing.T, m *machine) {
	t.Helper()
	m.con.send(`/web phone owner`)
	code := m.con.expect(`code (\d{8}): type it on the dashboard's pairing page`, 20*time.Second)[1]
	base := "http://" + m.web
	client := &http.Client{Timeout: 20 * time.Second}
	resp, err := client.Post(base+"/api/session", "application/json", strings.NewReader(`{"code":"`+code+`"}`))
	if err != nil {
		t.Fatalf("the dashboard on the image's LAN: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || len(resp.Cookies()) != 1 {
		t.Fatalf("pairing with %s: %d %s", code, resp.StatusCode, body)
	}
	cookie := resp.Cookies()[0]
	get := func(path string) (string, time.Duration) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		req.AddCookie(cookie)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v %.200s", path, resp.StatusCode, err, raw)
		}
		return string(raw), took
	}
	type pin struct {
		Name  string `json:"name"`
		Level int    `json:"level"`
	}
	var pins []pin
	raw, _ := get("/api/pins")
	// The console's write before this made the led high.
	if err := json.Unmarshal([]byte(raw), &pins); err != nil || !slices.Contains(pins, pin{"led", 1}) {
		t.Fatalf("/api/pins on the image: %v %.300s", err, raw)
	}
	get("/") // the first load starts doctor's checks in the background
	// The overview, rendered by the daemon, against a static file, which
	// renders nothing: what the emulated network and CPU cost either way.
	median := func(path, want string) (time.Duration, time.Duration) {
		var took []time.Duration
		for range 20 {
			page, d := get(path)
			if !strings.Contains(page, want) {
				t.Fatalf("GET %s: %.300s", path, page)
			}
			took = append(took, d)
		}
		slices.Sort(took)
		return took[len(took)/2], took[len(took)-1]
	}
	page, pageMax := median("/", "<h1")
	static, staticMax := median("/static/style.css", "{")
	fmt.Fprintf(os.Stderr, "WEB-PAGE over QEMU's network, 20 loads each: the overview median %.1f ms (slowest %.1f), a static file median %.1f ms (slowest %.1f)\n",
		ms(page), ms(pageMax), ms(static), ms(staticMax))
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// onCard waits until the boot partition of img holds the first pairing file
// with code (want), or holds no such file (!want): init writes it from the
// running guest, so the host reads the card until it agrees, a few seconds.
func onCard(t *testing.T, img string, tab disk.Table, code string, want bool) {
	t.Helper()
	var got string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		b, err := disk.ReadFAT(img, tab.Partitions[0].Start, update.PairingFile)
		got = string(b)
		if want && err == nil && strings.Contains(got, "    "+code+"\n") || !want && err != nil && strings.Contains(err.Error(), "not found") {
			return
		}
	}
	t.Fatalf("the boot partition's %s: want the code %s there: %v; it holds %q", update.PairingFile, code, want, got)
}
