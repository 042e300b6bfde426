package telegram

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/internal/httpclient/rawserver"
)

// Tests of the client against a TCP server scripted byte by byte: what goes on
// the wire, which methods are retried, and that no error shows the token. How
// connections are kept, chunked, proxied and secured is internal/httpclient's
// and tested there.

const (
	rawToken = "777000:RAWtokenRAWtokenRAWtokenRAWtoken12"
	okMe     = `{"ok":true,"result":{"id":1,"is_bot":true,"first_name":"b","username":"b"}}`
	okNone   = `{"ok":true,"result":[]}`
)

func noEnv(string) string { return "" }

type rawServer = rawserver.Server

func newRawServer(t *testing.T, script func(n int, c net.Conn, s *rawServer, br *bufio.Reader)) *rawServer {
	return rawserver.New(t, script)
}

func reply(body string, fields ...string) string {
	return rawserver.Reply("application/json", body, fields...)
}

func rawClient(t *testing.T, url string) *Client {
	c := NewClient(url, rawToken, ClientOptions{Getenv: noEnv, Timeout: 5 * time.Second})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func noToken(t *testing.T, err error) {
	t.Helper()
	if err != nil && (strings.Contains(err.Error(), rawToken) || strings.Contains(err.Error(), strings.Split(rawToken, ":")[1])) {
		t.Errorf("the token is in %q", err)
	}
}

func TestHTTPRequestOnTheWire(t *testing.T) {
	got := make(chan *http.Request, 1)
	bodies := make(chan string, 1)
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		b, _ := io.ReadAll(req.Body)
		got <- req
		bodies <- string(b)
		io.WriteString(c, reply(okMe))
	})
	c := rawClient(t, s.URL()+"/tg/api/")
	u, err := c.GetMe(context.Background())
	if err != nil || u.Username != "b" {
		t.Fatalf("GetMe = %+v, %v", u, err)
	}
	req := <-got
	if req.Method != "POST" || req.URL.Path != "/tg/api/bot"+rawToken+"/getMe" || req.Proto != "HTTP/1.1" {
		t.Errorf("request %s %s %s", req.Method, req.URL.Path, req.Proto)
	}
	if req.Host != s.Addr() || req.Header.Get("Content-Type") != "application/json" || req.ContentLength != 2 {
		t.Errorf("Host %q, header %v, length %d", req.Host, req.Header, req.ContentLength)
	}
	if b := <-bodies; b != "{}" {
		t.Errorf("body %q", b)
	}
}

func TestAPIURLs(t *testing.T) {
	for _, tc := range []struct{ url, base string }{
		{"https://api.telegram.org", "https://api.telegram.org"},
		{"https://api.telegram.org/", "https://api.telegram.org"},
		{"http://127.0.0.1:8081/x/y/", "http://127.0.0.1:8081/x/y"},
		{"http://[::1]:8081", "http://[::1]:8081"},
		{"https://[2001:db8::1]/bot-api", "https://[2001:db8::1]/bot-api"},
		{"http://h/a%20b", "http://h/a%20b"},
	} {
		base, err := checkAPIURL(tc.url)
		if err != nil || base != tc.base {
			t.Errorf("%s: %q, %v", tc.url, base, err)
		}
	}
	for _, bad := range []string{"ftp://h", "h:80", "https://", "https://u:p@h", "https://h/?q=1", "http://bad host"} {
		if _, err := checkAPIURL(bad); err == nil || !strings.Contains(err.Error(), "bad api_url") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

// The server takes the request on a kept connection, then closes it without a byte
// of reply (as when its idle timer fires just then). getUpdates is sent again on a
// new connection; sendMessage is not: it may have been delivered.
func TestHTTPRetryOnlyWhatIsSafe(t *testing.T) {
	for _, tc := range []struct {
		method   string
		retried  bool
		requests int32
	}{{"getUpdates", true, 3}, {"getMe", true, 3}, {"sendMessage", false, 2}, {"editMessageText", false, 2}} {
		t.Run(tc.method, func(t *testing.T) {
			s := newRawServer(t, func(n int, c net.Conn, s *rawServer, br *bufio.Reader) {
				if n == 1 {
					s.Next(br)
					io.WriteString(c, reply(okNone))
					s.Next(br) // taken, never answered
					return
				}
				s.Serve(c, br, reply(okNone))
			})
			c := rawClient(t, s.URL())
			if err := c.Call(context.Background(), "getMe", struct{}{}, nil); err != nil {
				t.Fatal(err)
			}
			err := c.Call(context.Background(), tc.method, struct{}{}, nil)
			if tc.retried && err != nil {
				t.Fatalf("%s not retried: %v", tc.method, err)
			}
			var ne *NetError
			if !tc.retried && (!errors.As(err, &ne) || !strings.Contains(err.Error(), "telegram "+tc.method+": "+s.Addr()+": the connection closed before a reply")) {
				t.Fatalf("%s = %v, want a NetError awaiting the reply", tc.method, err)
			}
			if n := s.Requests.Load(); n != tc.requests {
				t.Errorf("server saw %d requests, want %d", n, tc.requests)
			}
			noToken(t, err)
		})
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := rawClient(t, "http://"+addr)
	_, err = c.GetUpdates(context.Background(), 0, 1, time.Second)
	if want := "telegram getUpdates: " + addr + ": connection refused"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// Whatever a broken server sends back, the token is not in the error.
func TestHTTPErrorsNeverShowTheToken(t *testing.T) {
	for _, junk := range []string{
		"HTTP/1.1 2x0 /bot" + rawToken + "/getMe\r\n\r\n",
		"HTTP/1.1 200 OK\r\n/bot" + rawToken + "\r\n\r\n",
		"GET /bot" + rawToken + "/getMe HTTP/1.1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + rawToken + "\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: " + rawToken + "\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: " + rawToken + "\r\n\r\n",
		"HTTP/1.1 400 Bad\r\n\r\n/bot" + rawToken + "/getMe",
	} {
		s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
			s.Next(br)
			io.WriteString(c, junk)
		})
		c := rawClient(t, s.URL())
		_, err := c.GetMe(context.Background())
		if err == nil {
			t.Errorf("no error for %q", junk)
		}
		noToken(t, err)
	}
}

// Issue 11 item 2: a token echoed across a cut (Telegram's description at 300
// bytes, a header line near 60) leaves no prefix of 8+ bytes.
func TestHTTPErrorsNeverShowPartOfTheToken(t *testing.T) {
	secret := strings.Split(rawToken, ":")[1]
	for cut := 0; cut < len(rawToken); cut += 3 {
		pad := strings.Repeat("x", 300-cut)
		for _, junk := range []string{
			reply(`{"ok":false,"error_code":400,"description":"` + pad + " " + rawToken + `"}`),
			"HTTP/1.1 200 OK\r\n" + pad[:max(0, 60-cut)] + rawToken + "\r\n\r\n",
		} {
			s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
				s.Next(br)
				io.WriteString(c, junk)
			})
			_, err := rawClient(t, s.URL()).GetMe(context.Background())
			if err == nil {
				t.Fatalf("no error for %q", junk)
			}
			if strings.Contains(err.Error(), secret[:8]) || strings.Contains(err.Error(), rawToken[:12]) {
				t.Fatalf("cut %d: part of the token is in %q", cut, err)
			}
		}
	}
}

func TestHTTPBodyOverTheCap(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		s.Next(br)
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", MaxResponseBytes+1)
	})
	c := rawClient(t, s.URL())
	_, err := c.GetMe(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over the %d-byte cap", MaxResponseBytes)) {
		t.Errorf("err = %v", err)
	}
}

// HTTP_PROXY from the client's environment: a plain-http Bot API goes through
// the proxy (a scripted one on 127.0.0.1) as an absolute-form request, and
// NO_PROXY sends it direct.
func TestHTTPProxyFromEnvironment(t *testing.T) {
	uris := make(chan string, 1)
	p := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		if req := s.Next(br); req != nil {
			uris <- req.RequestURI
			io.WriteString(c, reply(okMe))
		}
	})
	env := map[string]string{"HTTP_PROXY": p.URL()}
	c := NewClient("http://bots.example:8081", rawToken, ClientOptions{Getenv: func(k string) string { return env[k] }, Timeout: 5 * time.Second})
	if u, err := c.GetMe(context.Background()); err != nil || u.Username != "b" {
		t.Fatalf("GetMe through the proxy = %+v, %v", u, err)
	}
	if uri := <-uris; uri != "http://bots.example:8081/bot"+rawToken+"/getMe" {
		t.Errorf("the proxy saw %q", uri)
	}
	env["NO_PROXY"] = "bots.example"
	c = NewClient("http://bots.example:8081", rawToken, ClientOptions{Getenv: func(k string) string { return env[k] }, Timeout: 5 * time.Second})
	_, err := c.GetMe(context.Background())
	if err == nil || p.Requests.Load() != 1 || strings.Contains(err.Error(), "via proxy") {
		t.Errorf("NO_PROXY: %v after %d proxied requests", err, p.Requests.Load())
	}
	noToken(t, err)
}
