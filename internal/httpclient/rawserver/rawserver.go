// Package rawserver is a TCP server for tests of HTTP clients, scripted byte by
// byte: it lets a test send exactly the malformed, slow or truncated replies a
// real server might, which net/http's test server cannot.
package rawserver

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// Server listens on 127.0.0.1; Script runs for each accepted connection
// (numbered from 1), and the connection is closed when it returns.
type Server struct {
	ln       net.Listener
	Accepted atomic.Int32 // connections accepted
	Requests atomic.Int32 // requests read with Next
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

// New starts a server that t's cleanup stops, closing every connection.
func New(t testing.TB, script func(n int, c net.Conn, s *Server, br *bufio.Reader)) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{ln: ln}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := int(s.Accepted.Add(1))
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				script(n, c, s, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// Addr is host:port; URL is http://host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }
func (s *Server) URL() string  { return "http://" + s.Addr() }

// Next reads one request and its body; nil when the client closed the connection.
func (s *Server) Next(br *bufio.Reader) *http.Request {
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil
	}
	io.Copy(io.Discard, req.Body)
	s.Requests.Add(1)
	return req
}

// Serve answers every request on the connection with reply, keeping it alive.
func (s *Server) Serve(c net.Conn, br *bufio.Reader, reply string) {
	for s.Next(br) != nil {
		io.WriteString(c, reply)
	}
}

// Reply is a 200 reply with body, of contentType, and the header fields
// given ("Name: value").
func Reply(contentType, body string, fields ...string) string {
	h := "HTTP/1.1 200 OK\r\nContent-Type: " + contentType + "\r\n"
	for _, f := range fields {
		h += f + "\r\n"
	}
	return h + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}
