package telegram

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
		if r.ProtoMajor != 1 || r.Method != "POST" {
			http.Error(w, r.Proto+" "+r.Method, 400)
			return
		}
		select {
		case paths <- r.URL.Path:
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, okMe)
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

func TestH1HTTPS(t *testing.T) {
	srv, pool, conns, paths := tlsServer(t)
	c := NewClient(srv.URL+"/prefix/", rawToken, ClientOptions{RootCAs: pool, Getenv: noEnv})
	defer c.CloseIdleConnections()
	for range 3 {
		if u, err := c.GetMe(context.Background()); err != nil || u.ID != 1 {
			t.Fatalf("GetMe over TLS = %v, %v", u, err)
		}
	}
	if p := <-paths; p != "/prefix/bot"+rawToken+"/getMe" {
		t.Errorf("path %q", p)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d TLS connections for 3 calls, want 1", n)
	}

	// Without the test CA the certificate is refused, and the error says so.
	c = NewClient(srv.URL, rawToken, ClientOptions{Getenv: noEnv})
	_, err := c.GetMe(context.Background())
	addr := strings.TrimPrefix(srv.URL, "https://")
	if err == nil || !strings.Contains(err.Error(), "telegram getMe: "+addr+": TLS handshake: ") || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
	noToken(t, err)
}

// proxy is a forward proxy on 127.0.0.1: CONNECT tunnels (to target, whatever host
// is asked for, so that names need no DNS) and absolute-form requests, which it
// answers itself. It requires Basic auth when auth is set.
type proxy struct {
	ln       net.Listener
	target   string
	auth     string
	mu       sync.Mutex
	requests []string // request lines
	wg       sync.WaitGroup
}

func newProxy(t *testing.T, target, auth string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, auth: auth}
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

func (p *proxy) handle(c net.Conn, mu *sync.Mutex, conns *[]net.Conn) {
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
			io.WriteString(c, reply(okMe))
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

func (p *proxy) lines() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.requests...)
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestH1ConnectProxy(t *testing.T) {
	srv, pool, conns, _ := tlsServer(t)
	p := newProxy(t, srv.Listener.Addr().String(), "user:pa ss")
	// example.com is in the test certificate; only the proxy is dialled.
	c := NewClient("https://example.com/", rawToken, ClientOptions{RootCAs: pool,
		Getenv: env(map[string]string{"https_proxy": "http://user:pa%20ss@" + p.ln.Addr().String()})})
	defer c.CloseIdleConnections()
	for range 2 {
		if u, err := c.GetMe(context.Background()); err != nil || u.ID != 1 {
			t.Fatalf("GetMe through the proxy = %v, %v", u, err)
		}
	}
	if l := p.lines(); len(l) != 1 || l[0] != "CONNECT example.com:443" {
		t.Errorf("proxy saw %q, want one CONNECT example.com:443", l)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections", n)
	}

	// Wrong credentials: the proxy's refusal, naming the proxy, neither the password
	// nor the token.
	c = NewClient("https://example.com/", rawToken, ClientOptions{RootCAs: pool,
		Getenv: env(map[string]string{"HTTPS_PROXY": "user:secretpw@" + p.ln.Addr().String()})})
	_, err := c.GetMe(context.Background())
	want := "telegram getMe: example.com:443 via proxy " + p.ln.Addr().String() + ": the proxy refused CONNECT: 407 Proxy Authentication Required"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "secretpw") {
		t.Error("the proxy password is in the error")
	}
}

// A plain http target goes to an HTTP_PROXY as an absolute-form request.
func TestH1PlainProxy(t *testing.T) {
	p := newProxy(t, "", "u:p")
	c := NewClient("http://bots.example:8081/x", rawToken, ClientOptions{
		Getenv: env(map[string]string{"HTTP_PROXY": "http://u:p@" + p.ln.Addr().String(), "HTTPS_PROXY": "http://127.0.0.2:1"})})
	defer c.CloseIdleConnections()
	if _, err := c.GetMe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if l := p.lines(); len(l) != 1 || l[0] != "POST http://bots.example:8081/x/bot"+rawToken+"/getMe" {
		t.Errorf("proxy saw %q", l)
	}
}

func TestH1ProxyTimeout(t *testing.T) {
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
	c := NewClient("https://example.com", rawToken, ClientOptions{DialTimeout: 200 * time.Millisecond,
		Getenv: env(map[string]string{"HTTPS_PROXY": ln.Addr().String()})})
	start := time.Now()
	_, err = c.GetMe(context.Background())
	if err == nil || !strings.Contains(err.Error(), "via proxy "+ln.Addr().String()+": connecting: ") || time.Since(start) > 2*time.Second {
		t.Errorf("err = %v after %v", err, time.Since(start))
	}
}
