package web

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/fairlisten/floodtest"
)

// serveDash serves d's dashboard with Serve (its listener and bounds, not
// httptest's) on 127.0.0.1 until the test ends, and returns its address.
func serveDash(t *testing.T, d *dash) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.srv.Serve(ctx, ln, nil) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("the dashboard did not stop")
		}
	})
	return ln.Addr().String()
}

// 64 idle connections (half of them keep-alive ones that loaded /pair, half
// that sent nothing) and 64 that sent half a request do not keep a browser
// from pairing and loading the dashboard: the listener closes them for room.
// Before, the first 32 held every slot, a keep-alive one for its 60 s idle
// time, and the browser waited in the backlog behind the rest.
func TestFloodDoesNotKeepBrowserOut(t *testing.T) {
	d := newDash(t, nil)
	addr := serveDash(t, d)
	base := "http://" + addr
	if n := floodtest.Hold(t, addr, "GET /pair HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 64, 64); n != 128 {
		t.Fatalf("%d of 128 connections made", n)
	}
	code, _, err := d.srv.Sessions.Pair("phone", Operator)
	if err != nil {
		t.Fatal(err)
	}
	// A browser: a cookie jar, keep-alive connections; 30 s for it all.
	jar, _ := cookiejar.New(nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := &http.Client{Jar: jar}
	do := func(method, path, body string, header ...string) (int, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatalf("%s %s with 128 connections held: %v", method, path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if status, _ := do("GET", "/pair", ""); status != 200 {
		t.Fatalf("GET /pair: %d", status)
	}
	status, body := do("POST", "/api/session", `{"code":"`+code+`"}`, "Content-Type", "application/json")
	if status != 200 {
		t.Fatalf("pairing: %d %s", status, body)
	}
	var rep sessionReply
	json.Unmarshal([]byte(body), &rep)
	if status, body := do("GET", "/", ""); status != 200 || !strings.Contains(body, `name="csrf"`) {
		t.Errorf("the overview after pairing: %d", status)
	}
	if status, body := do("POST", "/api/call", `{"tool":"gpio/write","args":{"pin":"led","value":1}}`, "Content-Type", "application/json", csrfHeader, rep.CSRF); status != 200 {
		t.Errorf("a call: %d %s", status, body)
	}
	if d.level() != hal.High {
		t.Error("the led is not on")
	}
}

// A session unused for the idle time, or older than the absolute one, is
// refused and gone from the list; the list shows each one's last use, which
// is kept in the store.
func TestSessionsExpire(t *testing.T) {
	d := newDash(t, nil)
	d.srv.Sessions.SetExpiry(time.Hour, 3*time.Hour)
	phone := d.pair("phone", Viewer)
	tablet := d.pair("tablet", Viewer)
	listed := func() []string {
		var names []string
		for _, dev := range d.srv.Sessions.List() {
			names = append(names, dev.Name)
		}
		return names
	}
	pins := func(b *browser) int { resp, _ := b.do("GET", "/api/pins", ""); return resp.StatusCode }
	// The phone is used every 50 minutes; the tablet once, then no more.
	for i := range 3 {
		d.advance(50 * time.Minute)
		if got := pins(phone); got != 200 {
			t.Fatalf("the phone after %d uses 50 minutes apart: %d", i+1, got)
		}
		if i == 0 && pins(tablet) != 200 {
			t.Fatal("the tablet's first use")
		}
	}
	// 2h30 after pairing: the tablet was last used 1h40 ago.
	var phoneUse time.Time
	for _, dev := range d.srv.Sessions.List() {
		if dev.Name == "phone" {
			phoneUse = dev.LastUsed
		}
	}
	if want := d.now(); !phoneUse.Equal(want) {
		t.Errorf("the phone's last use is %v, want %v", phoneUse, want)
	}
	if got := listed(); !slices.Equal(got, []string{"phone"}) {
		t.Errorf("listed %v after the tablet's idle time: want only the phone", got)
	}
	if got := pins(tablet); got != http.StatusUnauthorized {
		t.Errorf("the tablet past its idle time: %d, want 401", got)
	}
	// The last use survives a restart (it is saved, within useSaveEvery).
	again, err := OpenSessions(d.st, d.now)
	if err != nil {
		t.Fatal(err)
	}
	if l := again.List(); len(l) != 1 || d.now().Sub(l[0].LastUsed) > useSaveEvery {
		t.Errorf("after a restart: %+v, want the phone used at %v", l, d.now())
	}
	// Past 3 hours after its pairing the phone is refused, used or not.
	d.advance(31 * time.Minute)
	if got := pins(phone); got != http.StatusUnauthorized {
		t.Errorf("the phone 3h01 after its pairing: %d, want 401", got)
	}
	if got := listed(); len(got) != 0 {
		t.Errorf("listed %v past the absolute expiry", got)
	}
}

// Sessions stored before their last use was kept are not ended by the
// upgrade: their idle time starts when the store is opened (the absolute
// expiry still counts from the pairing).
func TestSessionsWithoutLastUse(t *testing.T) {
	d := newDash(t, nil)
	d.pair("phone", Viewer)
	d.pair("tablet", Viewer)
	// Write the sessions back as an older daemon kept them: no last use.
	raw, _, err := d.st.Get(kvBucket, kvState)
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	json.Unmarshal(raw, &st)
	for _, se := range st["sessions"].(map[string]any) {
		delete(se.(map[string]any), "last_used")
	}
	raw, _ = json.Marshal(st)
	if err := d.st.Put(kvBucket, kvState, raw); err != nil {
		t.Fatal(err)
	}
	d.advance(30 * 24 * time.Hour) // paired a month ago, used since but never recorded
	s, err := OpenSessions(d.st, d.now)
	if err != nil {
		t.Fatal(err)
	}
	if l := s.List(); len(l) != 2 || !l[0].LastUsed.Equal(d.now()) {
		t.Errorf("after the upgrade: %+v, want both, last used now", l)
	}
	d.advance(DefaultIdle + time.Minute)
	if l := s.List(); len(l) != 0 {
		t.Errorf("unused for the idle time after the upgrade: %+v, want none", l)
	}
}
