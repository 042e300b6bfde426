package http1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/internal/http1/http1test"
)

// Tests of the client against a TCP server scripted byte by byte.

func noEnv(string) string { return "" }

// rawServer is the scripted TCP server shared by the HTTP client tests.
type rawServer = http1test.RawServer

func newRawServer(t *testing.T, script func(n int, c net.Conn, s *rawServer, br *bufio.Reader)) *rawServer {
	return http1test.NewRawServer(t, script)
}

func reply(body string, fields ...string) string {
	h := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	for _, f := range fields {
		h += f + "\r\n"
	}
	return h + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
}

func newClient(t *testing.T) *Client {
	c := &Client{Getenv: noEnv}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// fetch sends req and reads the whole body.
func fetch(ctx context.Context, c *Client, req *Request) (*Response, string, error) {
	resp, err := c.Do(ctx, req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func get(url string) *Request { return &Request{URL: url, Idempotent: true} }

func (c *Client) idleCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.idle)
}

func TestRequestOnTheWire(t *testing.T) {
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
		io.WriteString(c, reply("ok"))
	})
	c := newClient(t)
	resp, body, err := fetch(context.Background(), c, &Request{Method: "POST", URL: s.URL() + "/a%20b/c:d?x=1&y=%2F",
		Header: []Field{{"Content-Type", "application/json"}, {"X-Two", "a"}, {"X-Two", "b"}}, Body: []byte("{}")})
	if err != nil || resp.Status != 200 || body != "ok" || resp.StatusLine() != "200 OK" || resp.ContentLength != 2 {
		t.Fatalf("POST = %+v %q, %v", resp, body, err)
	}
	req := <-got
	if req.Method != "POST" || req.RequestURI != "/a%20b/c:d?x=1&y=%2F" || req.Proto != "HTTP/1.1" {
		t.Errorf("request %s %s %s", req.Method, req.RequestURI, req.Proto)
	}
	if req.Host != s.Addr() || req.Header.Get("Content-Type") != "application/json" || req.ContentLength != 2 ||
		strings.Join(req.Header.Values("X-Two"), ",") != "a,b" {
		t.Errorf("Host %q, header %v, length %d", req.Host, req.Header, req.ContentLength)
	}
	if b := <-bodies; b != "{}" {
		t.Errorf("body %q", b)
	}
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct{ url, addr, host, path string }{
		{"https://api.telegram.org", "api.telegram.org:443", "api.telegram.org", "/"},
		{"https://api.telegram.org/", "api.telegram.org:443", "api.telegram.org", "/"},
		{"http://127.0.0.1:8081/x/y/", "127.0.0.1:8081", "127.0.0.1:8081", "/x/y/"},
		{"http://[::1]:8081", "[::1]:8081", "[::1]:8081", "/"},
		{"https://[2001:db8::1]/bot-api", "[2001:db8::1]:443", "[2001:db8::1]", "/bot-api"},
		{"http://h/a%20b?q=1#frag", "h:80", "h", "/a%20b?q=1"},
	} {
		tr, err := parseTarget(tc.url)
		if err != nil {
			t.Errorf("%s: %v", tc.url, err)
			continue
		}
		if tr.addr != tc.addr || tr.host != tc.host || tr.path != tc.path {
			t.Errorf("%s: addr %q host %q path %q", tc.url, tr.addr, tr.host, tr.path)
		}
	}
	for _, bad := range []string{"ftp://h", "h:80", "https://", "https://u:p@h", "http://bad host", "http://h/a\r\nX: y", "http://h/\x7f"} {
		if _, err := parseTarget(bad); err == nil || !strings.HasPrefix(err.Error(), "bad URL") {
			t.Errorf("%q: err = %v", bad, err)
		} else if strings.Contains(err.Error(), "u:p") || strings.Contains(err.Error(), "bad host") {
			t.Errorf("%q: the URL is in the error %q", bad, err)
		}
	}
	// Never a header with a line break smuggled in, nor one the client sets itself.
	c := newClient(t)
	for _, f := range []Field{{"X", "a\r\nY: b"}, {"X Y", "a"}, {"Content-Length", "1"}, {"host", "h"}} {
		if _, err := c.Do(context.Background(), &Request{URL: "http://127.0.0.1:1/", Header: []Field{f}}); err == nil {
			t.Errorf("header %q accepted", f)
		}
	}
}

func TestKeepAlive(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) { s.Serve(c, br, reply("hello")) })
	c := newClient(t)
	for i := range 5 {
		if _, b, err := fetch(context.Background(), c, get(s.URL())); err != nil || b != "hello" {
			t.Fatalf("request %d: %q, %v", i, b, err)
		}
	}
	if n := s.Accepted.Load(); n != 1 {
		t.Errorf("%d connections for 5 requests, want 1", n)
	}
}

// Chunked replies keep the connection too.
func TestKeepAliveChunked(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		for s.Next(br) != nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n3\r\n, w\r\n0\r\nTrailer: x\r\n\r\n")
		}
	})
	c := newClient(t)
	for range 3 {
		if resp, b, err := fetch(context.Background(), c, get(s.URL())); err != nil || b != "hello, w" || resp.ContentLength != -1 {
			t.Fatalf("GET = %q, %v", b, err)
		}
	}
	if n := s.Accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

func TestConnectionClose(t *testing.T) {
	for name, resp := range map[string]string{
		"connection close": reply("x", "Connection: close"),
		"http/1.0":         strings.Replace(reply("x"), "HTTP/1.1", "HTTP/1.0", 1),
		"until close":      "HTTP/1.1 200 OK\r\n\r\nx",
	} {
		t.Run(name, func(t *testing.T) {
			s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
				if s.Next(br) != nil {
					io.WriteString(c, resp)
				}
			})
			c := newClient(t)
			for i := range 3 {
				if _, b, err := fetch(context.Background(), c, get(s.URL())); err != nil || b != "x" {
					t.Fatalf("request %d: %q %v", i, b, err)
				}
			}
			if n := s.Accepted.Load(); n != 3 {
				t.Errorf("%d connections for 3 requests, want 3", n)
			}
		})
	}
}

// A response to HEAD has no body, whatever its Content-Length; 204 neither.
func TestNoBody(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		for req := s.Next(br); req != nil; req = s.Next(br) {
			if req.Method == "HEAD" {
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
			} else {
				io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
			}
		}
	})
	c := newClient(t)
	for _, m := range []string{"HEAD", "DELETE", "HEAD"} {
		resp, b, err := fetch(context.Background(), c, &Request{Method: m, URL: s.URL()})
		if err != nil || b != "" {
			t.Fatalf("%s: %q %v", m, b, err)
		}
		if m == "HEAD" && resp.ContentLength != 0 {
			t.Errorf("HEAD: ContentLength %d", resp.ContentLength)
		}
	}
	if n := s.Accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// The body streams: the caller has its first bytes before the server sends the rest.
// Closing a body before its end closes the connection; reading it to its end keeps it.
func TestBodyStreamsAndClose(t *testing.T) {
	more := make(chan struct{})
	s := newRawServer(t, func(n int, c net.Conn, s *rawServer, br *bufio.Reader) {
		s.Next(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfirst")
		if n == 1 {
			<-more
			io.WriteString(c, "-last")
			s.Serve(c, br, reply("again"))
			return
		}
		io.Copy(io.Discard, c) // the client closes it
	})
	c := newClient(t)
	resp, err := c.Do(context.Background(), get(s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if n, err := io.ReadAtLeast(resp.Body, buf, 5); err != nil || string(buf[:n]) != "first" {
		t.Fatalf("first read %q %v", buf[:n], err)
	}
	close(more)
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "-last" {
		t.Fatalf("rest %q %v", b, err)
	}
	resp.Body.Close()
	if _, b, err := fetch(context.Background(), c, get(s.URL())); err != nil || b != "again" {
		t.Fatalf("second request: %q %v", b, err)
	}
	if n := s.Accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}

	// Half read, then closed: that connection is not reused.
	resp, err = c.Do(context.Background(), get(s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Read(buf[:2])
	resp.Body.Close()
	if _, err := resp.Body.Read(buf); err == nil {
		t.Error("Read after Close succeeded")
	}
	if c.idleCount() != 0 {
		t.Error("a half-read connection went back to the pool")
	}
}

// The server closes the idle connection between requests: the next opens another,
// even one that must not be retried.
func TestServerClosesIdle(t *testing.T) {
	closed := make(chan struct{})
	s := newRawServer(t, func(n int, c net.Conn, s *rawServer, br *bufio.Reader) {
		if n == 1 {
			s.Next(br)
			io.WriteString(c, reply("x"))
			c.Close()
			close(closed)
			return
		}
		s.Serve(c, br, reply("x"))
	})
	c := newClient(t)
	if _, _, err := fetch(context.Background(), c, get(s.URL())); err != nil {
		t.Fatal(err)
	}
	<-closed
	// The idle watcher notices the close and drops the connection.
	for i := 0; c.idleCount() != 0; i++ {
		if i == 1000 {
			t.Fatal("the closed connection is still idle in the pool")
		}
		time.Sleep(time.Millisecond)
	}
	for _, r := range []*Request{{Method: "POST", URL: s.URL()}, get(s.URL())} {
		if _, _, err := fetch(context.Background(), c, r); err != nil {
			t.Fatalf("%s after the idle connection closed: %v", r.Method, err)
		}
	}
	if n := s.Accepted.Load(); n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// The server takes the request on a kept connection, then closes it without a byte
// of reply (as when its idle timer fires just then). An Idempotent request is sent
// again on a new connection; another is not: it may have been acted on.
func TestRetryOnlyIdempotent(t *testing.T) {
	for _, tc := range []struct {
		idempotent bool
		requests   int32
	}{{true, 3}, {false, 2}} {
		t.Run(fmt.Sprint(tc.idempotent), func(t *testing.T) {
			s := newRawServer(t, func(n int, c net.Conn, s *rawServer, br *bufio.Reader) {
				if n == 1 {
					s.Next(br)
					io.WriteString(c, reply("x"))
					s.Next(br) // taken, never answered
					return
				}
				s.Serve(c, br, reply("x"))
			})
			c := newClient(t)
			if _, _, err := fetch(context.Background(), c, get(s.URL())); err != nil {
				t.Fatal(err)
			}
			_, _, err := fetch(context.Background(), c, &Request{Method: "POST", URL: s.URL(), Idempotent: tc.idempotent})
			if tc.idempotent && err != nil {
				t.Fatalf("not retried: %v", err)
			}
			var he *Error
			if !tc.idempotent && (!errors.As(err, &he) || err.Error() != s.Addr()+": awaiting the reply: EOF") {
				t.Fatalf("err = %v, want an Error awaiting the reply", err)
			}
			if n := s.Requests.Load(); n != tc.requests {
				t.Errorf("server saw %d requests, want %d", n, tc.requests)
			}
		})
	}
}

// A fresh connection that breaks is never retried.
func TestNoRetryOnFreshConnection(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) { s.Next(br) })
	c := newClient(t)
	_, _, err := fetch(context.Background(), c, get(s.URL()))
	if err == nil || s.Accepted.Load() != 1 {
		t.Errorf("err %v after %d connections", err, s.Accepted.Load())
	}
}

func TestCancelMidBody(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		s.Next(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"ok\":true,")
		io.Copy(io.Discard, c) // until the client closes
	})
	c := newClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, _, err := fetch(ctx, c, get(s.URL()))
	if !errors.Is(err, context.Canceled) || err.Error() != s.Addr()+": reading the reply: canceled" {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("returned %v after the cancel", el)
	}
}

func TestSlowHeaders(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		s.Next(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\n") // and no more
		io.Copy(io.Discard, c)
	})
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Do(ctx, get(s.URL()))
	if want := s.Addr() + ": reading the reply: timed out"; err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if errors.Is(err, ErrIdleTimeout) {
		t.Error("ctx's deadline taken for the idle timeout")
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Errorf("took %v", el)
	}
}

// The idle timeout fails an exchange that receives nothing for that long, from the
// request on; a slow but steady one goes through.
func TestIdleTimeout(t *testing.T) {
	s := newRawServer(t, func(n int, c net.Conn, s *rawServer, br *bufio.Reader) {
		s.Next(br)
		switch n {
		case 1: // nothing
		case 2: // a head, then nothing
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
		case 3: // a byte every 50 ms
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
			for range 10 {
				time.Sleep(50 * time.Millisecond)
				io.WriteString(c, "x")
			}
		}
		io.Copy(io.Discard, c)
	})
	c := newClient(t)
	req := get(s.URL())
	req.IdleTimeout = 200 * time.Millisecond
	for i := range 2 {
		start := time.Now()
		_, _, err := fetch(context.Background(), c, req)
		if !errors.Is(err, ErrIdleTimeout) || !strings.Contains(err.Error(), "nothing received for 200ms") {
			t.Errorf("stall %d: err = %v", i, err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("stall %d: took %v", i, el)
		}
	}
	if _, b, err := fetch(context.Background(), c, req); err != nil || b != "xxxxxxxxxx" {
		t.Errorf("steady: %q %v", b, err)
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = newClient(t).Do(context.Background(), get("http://"+addr+"/secret/path"))
	if want := addr + ": connection refused"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// Whatever a broken server sends back, the error does not quote the request's path
// (what the server itself echoes is quoted, clipped: a caller with a secret in the path
// scrubs it, as the Telegram client does).
func TestErrorsNeverShowThePath(t *testing.T) {
	const secret = "/bot777000:SECRETsecretSECRETsecret/getMe"
	for _, junk := range []string{
		"",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nbad field\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 101 Switching Protocols\r\n\r\n",
	} {
		s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
			s.Next(br)
			io.WriteString(c, junk)
		})
		_, _, err := fetch(context.Background(), newClient(t), &Request{Method: "POST", URL: s.URL() + secret + "?q=SECRET"})
		if err == nil {
			t.Errorf("no error for %q", junk)
		} else if strings.Contains(err.Error(), "SECRET") || !strings.HasPrefix(err.Error(), s.Addr()+": ") {
			t.Errorf("error %q", err)
		}
	}
}

// Callers from several goroutines each get a connection; at most two stay idle.
func TestConcurrent(t *testing.T) {
	s := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		for s.Next(br) != nil {
			time.Sleep(time.Millisecond)
			io.WriteString(c, reply("x"))
		}
	})
	c := newClient(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if _, _, err := fetch(context.Background(), c, get(s.URL())); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if idle := c.idleCount(); idle > DefaultMaxIdleConns || s.Requests.Load() != 80 {
		t.Errorf("%d idle connections, %d requests", idle, s.Requests.Load())
	}
}

// Redirects: relative and absolute Locations, to another server, with the same
// header fields (Range included) but credentials only to the same host; a limit.
func TestRedirects(t *testing.T) {
	type seen struct{ uri, rng, auth string }
	var mu sync.Mutex
	var log []seen
	record := func(r *http.Request) {
		mu.Lock()
		log = append(log, seen{r.RequestURI, r.Header.Get("Range"), r.Header.Get("Authorization")})
		mu.Unlock()
	}
	cdn := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		for r := s.Next(br); r != nil; r = s.Next(br) {
			record(r)
			io.WriteString(c, "HTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n\r\ndata")
		}
	})
	// The CDN under another name for the same address: credentials must not go there.
	cdnURL := "http://localhost:" + strings.Split(cdn.Addr(), ":")[1]
	origin := newRawServer(t, func(_ int, c net.Conn, s *rawServer, br *bufio.Reader) {
		for r := s.Next(br); r != nil; r = s.Next(br) {
			record(r)
			switch r.URL.Path {
			case "/resolve/main/model.gguf":
				io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: ../cas/model.gguf?x=1\r\nContent-Length: 5\r\n\r\nmoved")
			case "/resolve/cas/model.gguf":
				io.WriteString(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: "+cdnURL+"/blob/1\r\nContent-Length: 0\r\n\r\n")
			case "/loop":
				io.WriteString(c, "HTTP/1.1 301 Moved\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n")
			default:
				io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			}
		}
	})
	c := newClient(t)
	req := &Request{URL: origin.URL() + "/resolve/main/model.gguf", Redirects: 10, Idempotent: true,
		Header: []Field{{"Range", "bytes=5-"}, {"Authorization", "Bearer t"}}}
	resp, b, err := fetch(context.Background(), c, req)
	if err != nil || resp.Status != 206 || b != "data" || resp.URL != cdnURL+"/blob/1" {
		t.Fatalf("redirected GET = %+v %q, %v", resp, b, err)
	}
	want := []seen{{"/resolve/main/model.gguf", "bytes=5-", "Bearer t"}, {"/resolve/cas/model.gguf?x=1", "bytes=5-", "Bearer t"}, {"/blob/1", "bytes=5-", ""}}
	mu.Lock()
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Errorf("requests %v\nwant %v", log, want)
	}
	mu.Unlock()
	if n := origin.Accepted.Load(); n != 1 {
		t.Errorf("%d connections to the origin for two requests, want 1", n)
	}

	// Not asked for, or not a GET: the redirect itself is the answer.
	for _, r := range []*Request{{URL: req.URL}, {Method: "POST", URL: req.URL, Redirects: 10}} {
		if resp, b, err := fetch(context.Background(), c, r); err != nil || resp.Status != 302 || b != "moved" || resp.Header.Get("Location") == "" {
			t.Errorf("%s without following: %v %q %v", r.Method, resp, b, err)
		}
	}
	// A loop ends.
	_, err = c.Do(context.Background(), &Request{URL: origin.URL() + "/loop", Redirects: 3})
	if err == nil || !strings.Contains(err.Error(), "stopped after 3 redirects") {
		t.Errorf("loop: %v", err)
	}
}
