package http1

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
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// HTTPS and proxies: an httptest TLS server (its certificate is for 127.0.0.1 and
// example.com), and a small proxy written here.

func tlsServer(t *testing.T) (*httptest.Server, *x509.CertPool, *atomic.Int32, chan string) {
	t.Helper()
	paths := make(chan string, 10)
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 1 {
			http.Error(w, r.Proto, 400)
			return
		}
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
	srv.EnableHTTP2 = true                           // the client must still get HTTP/1.1 through ALPN
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv, pool, &conns, paths
}

func TestHTTPS(t *testing.T) {
	srv, pool, conns, paths := tlsServer(t)
	c := &Client{RootCAs: pool, Getenv: noEnv}
	defer c.CloseIdleConnections()
	for range 3 {
		if _, b, err := fetch(context.Background(), c, &Request{Method: "POST", URL: srv.URL + "/prefix/x"}); err != nil || b != "secure" {
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
	c = &Client{Getenv: noEnv}
	_, err := c.Do(context.Background(), get(srv.URL))
	addr := strings.TrimPrefix(srv.URL, "https://")
	if err == nil || !strings.HasPrefix(err.Error(), addr+": TLS handshake: ") || !strings.Contains(err.Error(), "certificate") {
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

func TestConnectProxy(t *testing.T) {
	srv, pool, conns, _ := tlsServer(t)
	p := newProxy(t, srv.Listener.Addr().String(), "user:pa ss")
	// example.com is in the test certificate; only the proxy is dialled.
	c := &Client{RootCAs: pool, Getenv: env(map[string]string{"https_proxy": "http://user:pa%20ss@" + p.ln.Addr().String()})}
	defer c.CloseIdleConnections()
	for range 2 {
		if _, b, err := fetch(context.Background(), c, get("https://example.com/")); err != nil || b != "secure" {
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
	c = &Client{RootCAs: pool, Getenv: env(map[string]string{"HTTPS_PROXY": "user:secretpw@" + p.ln.Addr().String()})}
	_, err := c.Do(context.Background(), get("https://example.com/"))
	want := "example.com:443 via proxy " + p.ln.Addr().String() + ": the proxy refused CONNECT: 407 Proxy Authentication Required"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "secretpw") {
		t.Error("the proxy password is in the error")
	}
}

// A plain http target goes to an HTTP_PROXY as an absolute-form request.
func TestPlainProxy(t *testing.T) {
	p := newProxy(t, "", "u:p")
	c := &Client{Getenv: env(map[string]string{"HTTP_PROXY": "http://u:p@" + p.ln.Addr().String(), "HTTPS_PROXY": "http://127.0.0.2:1"})}
	defer c.CloseIdleConnections()
	if _, b, err := fetch(context.Background(), c, &Request{Method: "POST", URL: "http://bots.example:8081/x/y?z=1"}); err != nil || b != "proxied" {
		t.Fatal(b, err)
	}
	if l := p.lines(); len(l) != 1 || l[0] != "POST http://bots.example:8081/x/y?z=1" {
		t.Errorf("proxy saw %q", l)
	}
	// NO_PROXY: direct.
	c = &Client{Getenv: env(map[string]string{"HTTP_PROXY": "http://u:p@" + p.ln.Addr().String(), "NO_PROXY": "bots.example"})}
	if _, err := c.Do(context.Background(), get("http://bots.example:8081/")); err == nil || strings.Contains(err.Error(), "via proxy") {
		t.Errorf("NO_PROXY: %v", err)
	}
}

func TestProxyTimeout(t *testing.T) {
	// A proxy that accepts and never answers CONNECT.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	c := &Client{DialTimeout: 200 * time.Millisecond, Getenv: env(map[string]string{"HTTPS_PROXY": ln.Addr().String()})}
	start := time.Now()
	_, err = c.Do(context.Background(), get("https://example.com"))
	if err == nil || !strings.Contains(err.Error(), "via proxy "+ln.Addr().String()+": connecting: ") || time.Since(start) > 2*time.Second {
		t.Errorf("err = %v after %v", err, time.Since(start))
	}
}

func TestProxyFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env                map[string]string
		scheme, host, port string
		addr, auth, err    string // addr "" means direct
	}{
		{env: map[string]string{}, scheme: "https", host: "api.telegram.org", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:3128"}, scheme: "https", host: "api.telegram.org", port: "443", addr: "p:3128"},
		{env: map[string]string{"https_proxy": "p:3128"}, scheme: "https", host: "api.telegram.org", port: "443", addr: "p:3128"},
		{env: map[string]string{"HTTPS_PROXY": "http://p"}, scheme: "https", host: "h", port: "443", addr: "p:80"},
		{env: map[string]string{"HTTPS_PROXY": "http://[fd00::1]:8080"}, scheme: "https", host: "h", port: "443", addr: "[fd00::1]:8080"},
		{env: map[string]string{"HTTP_PROXY": "http://p:1"}, scheme: "https", host: "h", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://a:b@p:1"}, scheme: "https", host: "h", port: "443", addr: "p:1", auth: "Basic YTpi"},
		{env: map[string]string{"HTTPS_PROXY": "socks5://p:1080"}, scheme: "https", host: "h", port: "443", err: "only http://"},
		{env: map[string]string{"HTTPS_PROXY": "https://p:1"}, scheme: "https", host: "h", port: "443", err: "only http://"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, scheme: "https", host: "127.0.0.1", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, scheme: "https", host: "localhost", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1"}, scheme: "https", host: "::1", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*"}, scheme: "https", host: "h", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "no_proxy": "x, telegram.org"}, scheme: "https", host: "api.telegram.org", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "Telegram.ORG"}, scheme: "https", host: "telegram.org", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": ".telegram.org"}, scheme: "https", host: "telegram.org", port: "443", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "*.telegram.org"}, scheme: "https", host: "api.telegram.org", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "gram.org"}, scheme: "https", host: "telegram.org", port: "443", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "api.telegram.org:8443"}, scheme: "https", host: "api.telegram.org", port: "443", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "api.telegram.org:443"}, scheme: "https", host: "api.telegram.org", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, scheme: "https", host: "10.1.2.3", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "10.0.0.0/8"}, scheme: "https", host: "11.1.2.3", port: "443", addr: "p:1"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "fd00::5"}, scheme: "https", host: "fd00::5", port: "443"},
		{env: map[string]string{"HTTPS_PROXY": "http://p:1", "NO_PROXY": "[fd00::5]:443"}, scheme: "https", host: "fd00::5", port: "443"},
	} {
		p, err := proxyFromEnv(env(tc.env), tc.scheme, tc.host, tc.port)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v %s: err = %v, want %q", tc.env, tc.host, err, tc.err)
			}
		case err != nil:
			t.Errorf("%v %s: %v", tc.env, tc.host, err)
		case tc.addr == "" && p != nil:
			t.Errorf("%v %s: proxied through %s, want direct", tc.env, tc.host, p.addr)
		case tc.addr != "" && (p == nil || p.addr != tc.addr || p.auth != tc.auth):
			t.Errorf("%v %s: %+v, want %s %q", tc.env, tc.host, p, tc.addr, tc.auth)
		}
	}
}
