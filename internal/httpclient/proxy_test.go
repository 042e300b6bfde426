package httpclient

import (
	"bufio"
	"context"
	"crypto/x509"
	"encoding/base64"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// HTTPS and proxies: an httptest TLS server (its certificate is for 127.0.0.1 and
// example.com), and a small proxy on 127.0.0.1 written here.

func tlsServer(t *testing.T) (*httptest.Server, *x509.CertPool, *atomic.Int32, chan string) {
	t.Helper()
	paths := make(chan string, 10)
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case paths <- r.Method + " " + r.URL.Path:
		default:
		}
		io.WriteString(w, "secure")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, pool, &conns, paths
}

func TestHTTPS(t *testing.T) {
	srv, pool, conns, paths := tlsServer(t)
	c := New(Options{RootCAs: pool, Getenv: noEnv})
	defer c.CloseIdleConnections()
	for range 3 {
		if _, b, err := fetch(c, request(context.Background(), "POST", srv.URL+"/prefix/x", []byte("{}"))); err != nil || b != "secure" {
			t.Fatalf("POST over TLS = %q, %v", b, err)
		}
	}
	if p := <-paths; p != "POST /prefix/x" {
		t.Errorf("path %q", p)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d TLS connections for 3 requests, want 1", n)
	}

	// Without the test CA the certificate is refused, and the error says so.
	_, err := Do(New(Options{Getenv: noEnv}), get(srv.URL+"/SECRET"))
	addr := strings.TrimPrefix(srv.URL, "https://")
	if err == nil || !strings.HasPrefix(err.Error(), addr+": ") || !strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("untrusted certificate: %v", err)
	}
}

// testProxy is a forward proxy on 127.0.0.1: CONNECT tunnels (to target, whatever host
// is asked for, so that names need no DNS) and absolute-form requests, which it
// answers itself. It requires Basic auth when auth is set.
type testProxy struct {
	ln       net.Listener
	target   string
	auth     string
	mu       sync.Mutex
	requests []string // request lines
	wg       sync.WaitGroup
}

func newProxy(t *testing.T, target, auth string) *testProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &testProxy{ln: ln, target: target, auth: auth}
	var conns []net.Conn
	var mu sync.Mutex
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			p.wg.Go(func() { p.handle(c, &mu, &conns) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *testProxy) handle(c net.Conn, mu *sync.Mutex, conns *[]net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		p.mu.Lock()
		p.requests = append(p.requests, req.Method+" "+req.RequestURI)
		p.mu.Unlock()
		if p.auth != "" && req.Header.Get("Proxy-Authorization") != "Basic "+base64.StdEncoding.EncodeToString([]byte(p.auth)) {
			io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n")
			continue
		}
		if req.Method != "CONNECT" {
			io.WriteString(c, reply("proxied"))
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
			return
		}
		mu.Lock()
		*conns = append(*conns, up)
		mu.Unlock()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		done := make(chan struct{})
		go func() { io.Copy(up, br); up.Close(); close(done) }()
		io.Copy(c, up)
		c.Close()
		<-done
		return
	}
}

func (p *testProxy) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// An https target goes through a CONNECT tunnel of the HTTPS_PROXY, with the
// proxy's credentials; the tunnel is kept for the next request.
func TestConnectProxy(t *testing.T) {
	srv, pool, conns, _ := tlsServer(t)
	p := newProxy(t, srv.Listener.Addr().String(), "user:pa ss")
	// example.com is in the test certificate; only the proxy is dialled.
	c := New(Options{RootCAs: pool, Getenv: env(map[string]string{"https_proxy": "http://user:pa%20ss@" + p.ln.Addr().String()})})
	defer c.CloseIdleConnections()
	for range 2 {
		if _, b, err := fetch(c, get("https://example.com/")); err != nil || b != "secure" {
			t.Fatalf("GET through the proxy = %q, %v", b, err)
		}
	}
	if l := p.lines(); len(l) != 1 || l[0] != "CONNECT example.com:443" {
		t.Errorf("proxy saw %q, want one CONNECT example.com:443", l)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections", n)
	}

	// Wrong credentials: the proxy's refusal, naming the proxy, not the password.
	c = New(Options{RootCAs: pool, Getenv: env(map[string]string{"HTTPS_PROXY": "user:secretpw@" + p.ln.Addr().String()})})
	_, err := Do(c, get("https://example.com/"))
	want := "example.com:443 via proxy " + p.ln.Addr().String() + ": Proxy Authentication Required"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "secretpw") {
		t.Error("the proxy password is in the error")
	}
}

// A plain http target goes to an HTTP_PROXY as an absolute-form request;
// NO_PROXY sends it direct.
func TestPlainProxy(t *testing.T) {
	p := newProxy(t, "", "u:p")
	c := New(Options{Getenv: env(map[string]string{"HTTP_PROXY": "http://u:p@" + p.ln.Addr().String(), "HTTPS_PROXY": "http://127.0.0.2:1"})})
	defer c.CloseIdleConnections()
	if _, b, err := fetch(c, request(context.Background(), "POST", "http://bots.example:8081/x/y?z=1", []byte("{}"))); err != nil || b != "proxied" {
		t.Fatal(b, err)
	}
	if l := p.lines(); len(l) != 1 || l[0] != "POST http://bots.example:8081/x/y?z=1" {
		t.Errorf("proxy saw %q", l)
	}
	c = New(Options{Getenv: env(map[string]string{"HTTP_PROXY": "http://u:p@" + p.ln.Addr().String(), "NO_PROXY": "bots.example"})})
	if _, err := Do(c, get("http://bots.example:8081/")); err == nil || strings.Contains(err.Error(), "via proxy") || len(p.lines()) != 1 {
		t.Errorf("NO_PROXY: %v, proxy saw %q", err, p.lines())
	}
}

// A proxy setting that is not a URL is the error of every request through
// it, naming the variable, not its value.
func TestBadProxySetting(t *testing.T) {
	c := New(Options{Getenv: env(map[string]string{"HTTPS_PROXY": "http://u:secretpw@[bad"})})
	_, err := Do(c, get("https://example.com/"))
	if err == nil || err.Error() != "example.com:443: HTTPS_PROXY is not a proxy URL such as http://proxy:3128" {
		t.Errorf("err = %v", err)
	}
}

func TestProxyFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env       map[string]string
		url       string
		addr, err string // addr "" means direct
		user      string
	}{
		{env: map[string]string{}, url: "https://api.telegram.org"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:3128"}, url: "https://api.telegram.org", addr: "p:3128"},
		{env: map[string]string{"https_proxy": "p:3128"}, url: "https://api.telegram.org", addr: "p:3128"},
		{env: map[string]string{"HTTPS_PROXY": "http://p"}, url: "https://h", addr: "p:80"},
		{env: map[string]string{"HTTPS_PROXY": "http://[fd00::1]:8080"}, url: "https://h", addr: "[fd00::1]:8080"},
		{env: map[string]string{"HTTP_PROXY": "http://p:1"}, url: "https://h"},
		{env: map[string]string{"HTTP_PROXY": "http://p:1"}, url: "http://h", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://a:b@p:1"}, url: "https://h", addr: "p:1", user: "a:b"},
		{env: map[string]string{"HTTPS_PROXY": "socks5://p"}, url: "https://h", addr: "p:1080"},
		{env: map[string]string{"HTTPS_PROXY": "ftp://p:1"}, url: "https://h", err: "HTTPS_PROXY: ftp:// proxies are not supported"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, url: "https://127.0.0.1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, url: "https://localhost:8443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, url: "https://[::1]"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}, url: "https://h"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "no_proxy": "x, telegram.org"}, url: "https://api.telegram.org"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "Telegram.ORG"}, url: "https://telegram.org"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".telegram.org"}, url: "https://telegram.org", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*.telegram.org"}, url: "https://api.telegram.org"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "gram.org"}, url: "https://telegram.org", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "api.telegram.org:8443"}, url: "https://api.telegram.org", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "api.telegram.org:443"}, url: "https://api.telegram.org"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, url: "https://10.1.2.3"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, url: "https://11.1.2.3", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "fd00::5"}, url: "https://[fd00::5]"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "[fd00::5]:443"}, url: "https://[fd00::5]"},
	} {
		u, _ := url.Parse(tc.url)
		p, err := proxyFunc(env(tc.env))(&http.Request{URL: u})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v %s: err = %v, want %q", tc.env, tc.url, err, tc.err)
			}
		case err != nil:
			t.Errorf("%v %s: %v", tc.env, tc.url, err)
		case tc.addr == "" && p != nil:
			t.Errorf("%v %s: proxied through %s, want direct", tc.env, tc.url, p)
		case tc.addr != "" && (p == nil || hostPort(p) != tc.addr || p.User.String() != tc.user):
			t.Errorf("%v %s: %v, want %s %q", tc.env, tc.url, p, tc.addr, tc.user)
		}
	}
}
