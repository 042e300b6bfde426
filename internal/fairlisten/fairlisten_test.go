package fairlisten

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/internal/fairlisten/floodtest"
)

// serve runs h behind a fair listener on 127.0.0.1 with long server
// timeouts (so that only the listener can make room), until the test ends.
func serve(t *testing.T, lim Limits, h http.Handler, trusted func(*http.Request) bool) (*Listener, string) {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := New(inner, lim)
	srv := &http.Server{Handler: ln.Guard(h, trusted), ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute}
	ln.Hook(srv)
	done := make(chan struct{})
	go func() { srv.Serve(ln); close(done) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		srv.Close()
		<-done
	})
	return ln, inner.Addr().String()
}

func ok(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }

func get(t *testing.T, cl *http.Client, url string, header ...string) (int, error) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// A server whose every slot is held by connections that sent nothing or
// half a request answers a new client at once: the listener closes the
// oldest of them for room. Behind netutil.LimitListener the client waited in
// the backlog until the server's header timeout (here a minute) freed one.
func TestIdleAndHalfRequestsMakeRoom(t *testing.T) {
	ln, addr := serve(t, Limits{MaxConns: 8}, http.HandlerFunc(ok), nil)
	if n := floodtest.Hold(t, addr, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 16, 16); n != 32 {
		t.Fatalf("%d of 32 connections made", n)
	}
	cl := &http.Client{Timeout: 20 * time.Second}
	for i := range 3 {
		if code, err := get(t, cl, "http://"+addr+"/"); err != nil || code != 200 {
			t.Fatalf("request %d with 32 connections held: %d, %v", i, code, err)
		}
	}
	if st := ln.Stats(); st.Evicted == 0 || st.Open > 8 {
		t.Errorf("stats %+v: want evictions and at most 8 open", st)
	}
}

// Requests being served are never closed for room: trusted ones at all,
// untrusted ones up to AnonBusy (the next is answered 503). When every slot
// serves a request, a new connection waits until one ends.
func TestBusyConnectionsKept(t *testing.T) {
	release := make(chan struct{})
	var in sync.WaitGroup
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			in.Done()
			<-release
		}
		io.WriteString(w, "ok")
	})
	trusted := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer yes" }
	ln, addr := serve(t, Limits{MaxConns: 4, AnonBusy: 2, AnonBusyPerPeer: 2}, h, trusted)
	url := "http://" + addr
	results := make(chan error, 4)
	call := func(auth string) {
		cl := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
		code, err := get(t, cl, url+"/block", "Authorization", auth)
		if err == nil && code != 200 {
			err = errors.New(http.StatusText(code))
		}
		results <- err
	}
	in.Add(4)
	go call("Bearer yes")
	go call("Bearer yes")
	go call("")
	go call("")
	in.Wait() // four requests held in the handler: every slot is busy
	// Nothing was closed for room, and a fifth connection waits in Accept
	// until a request ends.
	if st := ln.Stats(); st.Evicted != 0 || st.Open != 4 {
		t.Fatalf("stats %+v with four requests held: want none closed", st)
	}
	waiting := make(chan int, 1)
	go func() {
		cl := &http.Client{Timeout: time.Minute}
		code, err := get(t, cl, url+"/", "Authorization", "Bearer yes")
		if err != nil {
			t.Log(err)
		}
		waiting <- code
	}()
	select {
	case code := <-waiting:
		t.Fatalf("a fifth connection was served (%d) while four requests held every slot", code)
	case <-time.After(300 * time.Millisecond):
	}
	close(release)
	for range 4 {
		if err := <-results; err != nil {
			t.Errorf("a held request ended with %v", err)
		}
	}
	if code := <-waiting; code != 200 {
		t.Errorf("the waiting request got %d", code)
	}
}

// Past AnonBusy untrusted requests at once, or AnonBusyPerPeer of one peer
// (every request here is 127.0.0.1's), the next is answered 503 and closed; a
// trusted one is still served.
func TestAnonBusyBounded(t *testing.T) {
	release := make(chan struct{})
	var in sync.WaitGroup
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/block" {
			in.Done()
			<-release
		}
		io.WriteString(w, "ok")
	})
	trusted := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer yes" }
	for _, tc := range []struct{ all, peer, held int }{{2, 2, 2}, {8, 1, 1}} {
		_, addr := serve(t, Limits{MaxConns: 8, AnonBusy: tc.all, AnonBusyPerPeer: tc.peer}, h, trusted)
		url := "http://" + addr
		in.Add(tc.held)
		for range tc.held {
			go get(t, &http.Client{Timeout: time.Minute}, url+"/block")
		}
		in.Wait()
		cl := &http.Client{Timeout: 20 * time.Second}
		if code, err := get(t, cl, url+"/"); err != nil || code != http.StatusServiceUnavailable {
			t.Errorf("%+v: one more untrusted request: %d, %v; want 503", tc, code, err)
		}
		if code, err := get(t, cl, url+"/", "Authorization", "Bearer yes"); err != nil || code != 200 {
			t.Errorf("%+v: a trusted request: %d, %v; want 200", tc, code, err)
		}
	}
	close(release)
}

// An untrusted connection idle after its request is closed after AnonIdle;
// a trusted one keeps the server's keep-alive.
func TestAnonIdleClosed(t *testing.T) {
	trusted := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer yes" }
	_, addr := serve(t, Limits{MaxConns: 8, AnonIdle: 200 * time.Millisecond}, http.HandlerFunc(ok), trusted)
	open := func(auth string) (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: "+auth+"\r\n\r\n")
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return c, br
	}
	anon, anonR := open("none")
	trust, trustR := open("Bearer yes")
	anon.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := anonR.ReadByte(); err != io.EOF {
		t.Fatalf("the untrusted idle connection: %v, want EOF (closed by the server)", err)
	}
	trust.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := trustR.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the trusted idle connection, after the untrusted one was closed: %v, want still open", err)
	}
}

func TestPeerOf(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7:80":              "192.0.2.7",
		"[2001:db8:1:2:3:4:5:6]:80": "2001:db8:1:2::",
		"[::ffff:192.0.2.7]:80":     "192.0.2.7",
	} {
		a, err := net.ResolveTCPAddr("tcp", in)
		if err != nil {
			t.Fatal(err)
		}
		if got := peerOf(a); got != want {
			t.Errorf("peerOf(%s) = %s, want %s", in, got, want)
		}
	}
	if got := peerOf(&net.UnixAddr{Name: "x"}); !strings.EqualFold(got, "") {
		t.Errorf("a unix address is peer %q", got)
	}
}

// Under TLS (the dashboard's tls_cert), the server sees *tls.Conn: the
// listener still finds its connections there: silent ones are closed for
// room, and an untrusted idle one after AnonIdle.
func TestUnderTLS(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := New(inner, Limits{MaxConns: 4, AnonIdle: 200 * time.Millisecond})
	ts := httptest.NewUnstartedServer(ln.Guard(http.HandlerFunc(ok), nil))
	ts.Listener.Close()
	ts.Listener = ln
	ln.Hook(ts.Config)
	ts.Config.ReadHeaderTimeout = time.Minute
	ts.StartTLS()
	defer ts.Close()
	addr := inner.Addr().String()
	if n := floodtest.Hold(t, addr, "", 8, 0); n != 8 {
		t.Fatalf("%d of 8 connections made", n)
	}
	cl := ts.Client()
	cl.Timeout = 20 * time.Second
	if code, err := get(t, cl, ts.URL+"/"); err != nil || code != 200 {
		t.Fatalf("a request over TLS with 8 silent connections held: %d, %v", code, err)
	}
	// The client's connection, idle and untrusted, is closed by the server;
	// 3 silent ones are left (the others were closed for room).
	for deadline := time.Now().Add(20 * time.Second); ln.Stats().Open > 3; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v: the idle TLS connection was not closed", ln.Stats())
		}
	}
}
