package httpclient

import (
	"bufio"
	"bytes"
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

	"github.com/clawedge/clawedge/internal/httpclient/rawserver"
)

// Tests of the client against a TCP server scripted byte by byte: what net/http
// is given to do (streaming, cancelling, retrying, redirecting) and what its
// errors show.

func noEnv(string) string { return "" }

func reply(body string, fields ...string) string {
	return rawserver.Reply("text/plain", body, fields...)
}

func newClient(t *testing.T, redirects int) *http.Client {
	c := New(Options{Getenv: noEnv, Redirects: redirects})
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func request(ctx context.Context, method, url string, body []byte) *http.Request {
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	return req
}

// fetch sends req and reads the whole body.
func fetch(c *http.Client, req *http.Request) (*http.Response, string, error) {
	resp, err := Do(c, req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func get(url string) *http.Request { return request(context.Background(), "GET", url, nil) }

// A chunked body streams: the caller has the first chunk before the server
// sends the rest; the connection is kept for the next request.
func TestChunkedBodyStreams(t *testing.T) {
	more := make(chan struct{})
	s := rawserver.New(t, func(n int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		s.Next(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nfirst\r\n")
		<-more
		io.WriteString(c, "5\r\n-last\r\n0\r\nTrailer: x\r\n\r\n")
		s.Serve(c, br, reply("again"))
	})
	c := newClient(t, 0)
	resp, err := Do(c, get(s.URL()))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	if n, err := io.ReadAtLeast(resp.Body, buf, 5); err != nil || string(buf[:n]) != "first" || resp.ContentLength != -1 {
		t.Fatalf("first read %q %v, length %d", buf[:n], err, resp.ContentLength)
	}
	close(more)
	if b, err := io.ReadAll(resp.Body); err != nil || string(b) != "-last" {
		t.Fatalf("rest %q %v", b, err)
	}
	resp.Body.Close()
	if _, b, err := fetch(c, get(s.URL())); err != nil || b != "again" {
		t.Fatalf("second request: %q %v", b, err)
	}
	if n := s.Accepted.Load(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// A malformed chunk fails the read, naming no URL.
func TestBadChunk(t *testing.T) {
	s := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		s.Next(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n")
	})
	_, b, err := fetch(newClient(t, 0), get(s.URL()+"/SECRET"))
	if err == nil || b != "abc" || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("body %q, err %v", b, err)
	}
}

// Cancelling the request's context wakes a Read blocked on a server that sent
// part of the body and stalls.
func TestCancelWakesBlockedRead(t *testing.T) {
	s := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		s.Next(br)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{\"ok\":true,")
		io.Copy(io.Discard, c) // until the client closes
	})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := Do(newClient(t, 0), request(ctx, "GET", s.URL(), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 100)
	if _, err := io.ReadAtLeast(resp.Body, buf, 11); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		_, err := resp.Body.Read(buf)
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancel did not wake the read")
	}
}

// IdleReader ends a read that waits too long; a slow but steady body goes
// through.
func TestIdleReader(t *testing.T) {
	steady := make(chan struct{})
	s := rawserver.New(t, func(n int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		s.Next(br)
		if n == 1 { // a head and three bytes, then nothing
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nabc")
			io.Copy(io.Discard, c)
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n")
		for range 3 {
			<-steady
			io.WriteString(c, "x")
		}
	})
	c := newClient(t, 0)
	stalled := errors.New("stalled")
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	resp, err := Do(c, request(ctx, "GET", s.URL(), nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(IdleReader(resp.Body, 100*time.Millisecond, func() { cancel(stalled) }))
	resp.Body.Close()
	if string(b) != "abc" || err == nil || context.Cause(ctx) != stalled {
		t.Errorf("stall: %q, %v, cause %v", b, err, context.Cause(ctx))
	}

	// A steady body goes through, and between Reads the clock is stopped:
	// the caller may take its time with what it read.
	ctx, cancel = context.WithCancelCause(context.Background())
	defer cancel(nil)
	resp, err = Do(c, request(ctx, "GET", s.URL(), nil))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := IdleReader(resp.Body, 100*time.Millisecond, func() { cancel(stalled) })
	var got []byte
	for range 3 {
		steady <- struct{}{}
		p := make([]byte, 1)
		if _, err := io.ReadFull(r, p); err != nil {
			t.Fatal(err)
		}
		if r.(*idleReader).t.Stop() {
			t.Fatal("the idle clock runs between Reads")
		}
		got = append(got, p...)
	}
	if string(got) != "xxx" || context.Cause(ctx) != nil {
		t.Errorf("steady: %q, cause %v", got, context.Cause(ctx))
	}
}

func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Do(newClient(t, 0), get("http://"+addr+"/secret/path?token=SECRET"))
	var he *Error
	if want := addr + ": connection refused"; !errors.As(err, &he) || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
}

// Whatever a broken server sends back, the error does not quote the request's
// URL (what the server itself echoes may be quoted: a caller with a secret in
// the path scrubs it, as the Telegram client does).
func TestErrorsNeverShowTheURL(t *testing.T) {
	const secret = "/bot777000:SECRETsecretSECRETsecret/getMe"
	for _, junk := range []string{
		"",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nbad field\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: " + strings.Repeat("y", MaxHeaderBytes) + "\r\n\r\n",
	} {
		s := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
			s.Next(br)
			io.WriteString(c, junk)
		})
		_, _, err := fetch(newClient(t, 0), request(context.Background(), "POST", s.URL()+secret+"?q=SECRET", []byte("{}")))
		if err == nil {
			t.Errorf("no error for %q", junk)
		} else if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error %q", err)
		}
	}
}

// The server takes the request on a kept connection, then closes it without a
// byte of reply (as when its idle timer fires just then). A Replayable POST is
// sent again on a new connection; another is not: it may have been acted on.
func TestRetryOnlyReplayable(t *testing.T) {
	for _, replayable := range []bool{true, false} {
		t.Run(fmt.Sprint(replayable), func(t *testing.T) {
			s := rawserver.New(t, func(n int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
				if n == 1 {
					s.Next(br)
					io.WriteString(c, reply("x"))
					s.Next(br) // taken, never answered
					return
				}
				s.Serve(c, br, reply("x"))
			})
			c := newClient(t, 0)
			if _, _, err := fetch(c, get(s.URL())); err != nil {
				t.Fatal(err)
			}
			req := request(context.Background(), "POST", s.URL(), []byte("{}"))
			if replayable {
				Replayable(req)
			}
			_, _, err := fetch(c, req)
			if replayable && err != nil {
				t.Fatalf("not retried: %v", err)
			}
			if !replayable && (err == nil || !strings.HasPrefix(err.Error(), s.Addr()+": ")) {
				t.Fatalf("err = %v, want one naming %s", err, s.Addr())
			}
			want := int32(2)
			if replayable {
				want = 3
			}
			if n := s.Requests.Load(); n != want {
				t.Errorf("server saw %d requests, want %d", n, want)
			}
		})
	}
}

// Redirects: relative and absolute Locations, to another server, with the same
// header fields (Range included) but credentials only to the same host; a limit;
// none unless asked, none for a POST.
func TestRedirects(t *testing.T) {
	type seen struct{ uri, rng, auth string }
	var mu sync.Mutex
	var log []seen
	record := func(r *http.Request) {
		mu.Lock()
		log = append(log, seen{r.RequestURI, r.Header.Get("Range"), r.Header.Get("Authorization")})
		mu.Unlock()
	}
	cdn := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		for r := s.Next(br); r != nil; r = s.Next(br) {
			record(r)
			io.WriteString(c, "HTTP/1.1 206 Partial Content\r\nContent-Length: 4\r\n\r\ndata")
		}
	})
	// The CDN under another name for the same address: credentials must not go there.
	cdnURL := "http://localhost:" + strings.Split(cdn.Addr(), ":")[1]
	origin := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) {
		for r := s.Next(br); r != nil; r = s.Next(br) {
			record(r)
			switch r.URL.Path {
			case "/resolve/main/model.gguf":
				io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: ../cas/model.gguf?x=1\r\nContent-Length: 5\r\n\r\nmoved")
			case "/resolve/cas/model.gguf":
				io.WriteString(c, "HTTP/1.1 307 Temporary Redirect\r\nLocation: "+cdnURL+"/blob/1\r\nContent-Length: 0\r\n\r\n")
			case "/loop":
				io.WriteString(c, "HTTP/1.1 301 Moved\r\nLocation: /loop?SECRET\r\nContent-Length: 0\r\n\r\n")
			case "/down":
				io.WriteString(c, "HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/\r\nContent-Length: 0\r\n\r\n")
			default:
				io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
			}
		}
	})
	c := newClient(t, 10)
	url := origin.URL() + "/resolve/main/model.gguf"
	req := get(url)
	req.Header.Set("Range", "bytes=5-")
	req.Header.Set("Authorization", "Bearer t")
	resp, b, err := fetch(c, req)
	if err != nil || resp.StatusCode != 206 || b != "data" || resp.Request.URL.String() != cdnURL+"/blob/1" {
		t.Fatalf("redirected GET = %+v %q, %v", resp, b, err)
	}
	want := []seen{{"/resolve/main/model.gguf", "bytes=5-", "Bearer t"}, {"/resolve/cas/model.gguf?x=1", "bytes=5-", "Bearer t"}, {"/blob/1", "bytes=5-", ""}}
	mu.Lock()
	if fmt.Sprint(log) != fmt.Sprint(want) {
		t.Errorf("requests %v\nwant %v", log, want)
	}
	mu.Unlock()

	// Not asked for, or not a GET: the redirect itself is the answer.
	for _, tc := range []struct {
		c   *http.Client
		req *http.Request
	}{{newClient(t, 0), get(url)}, {c, request(context.Background(), "POST", url, []byte("{}"))}} {
		if resp, b, err := fetch(tc.c, tc.req); err != nil || resp.StatusCode != 302 || b != "moved" || resp.Header.Get("Location") == "" {
			t.Errorf("%s without following: %v %q %v", tc.req.Method, resp, b, err)
		}
	}
	// A loop ends, and the error names the server only.
	_, err = Do(newClient(t, 3), get(origin.URL()+"/loop"))
	if err == nil || err.Error() != origin.Addr()+": stopped after 3 redirects" {
		t.Errorf("loop: %v", err)
	}
	// No way down from https to http: checked on the URLs, as the server is plain.
	check := checkRedirect(10)
	from, to := get("https://example.com/a"), get("http://example.com/b")
	if err := check(to, []*http.Request{from}); err == nil || err.Error() != "refused a redirect from https to http" {
		t.Errorf("https to http: %v", err)
	}
}

// Callers from several goroutines each get a connection; they all end.
func TestConcurrent(t *testing.T) {
	s := rawserver.New(t, func(_ int, c net.Conn, s *rawserver.Server, br *bufio.Reader) { s.Serve(c, br, reply("x")) })
	c := newClient(t, 0)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				if _, _, err := fetch(c, get(s.URL())); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := s.Requests.Load(); n != 80 {
		t.Errorf("%d requests", n)
	}
}

// Clients made without options share the process's Transport (one pool);
// with a CA or an environment of their own they do not.
func TestSharedTransport(t *testing.T) {
	a, b := New(Options{}), New(Options{Redirects: 10})
	if a.Transport != b.Transport {
		t.Error("two default clients with two pools")
	}
	if c := New(Options{Getenv: noEnv}); c.Transport == a.Transport {
		t.Error("a client with its own environment shares the default pool")
	}
	tr := a.Transport.(*http.Transport)
	if tr.MaxIdleConns != MaxIdleConns || tr.MaxIdleConnsPerHost != MaxIdleConnsPerHost || tr.IdleConnTimeout != IdleConnTimeout {
		t.Errorf("pool %d/%d/%s", tr.MaxIdleConns, tr.MaxIdleConnsPerHost, tr.IdleConnTimeout)
	}
}
