package boards

// This file: finding boards on the LAN by DNS-SD (_clawedge._tcp, over
// multicast DNS; hashicorp/mdns): each board that serves A2A announces its
// card's URL and its name, and asks every DiscoverEvery who else is there.
// What a board announces is a hint, never trusted: a board found is paired
// only by the code its owner reads on it, and only that pins its key.

import (
	"context"
	"io"
	"log"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/mdns"
)

// Service is the DNS-SD service type of clawedge boards.
const ServiceType = "_clawedge._tcp"

const (
	maxFound      = 64
	browseTimeout = time.Second // responders answer within 120 ms (RFC 6762)
	// forgetFound: a board not heard of for this long is no longer listed.
	forgetFound = 5 * time.Minute
)

// Found is a board heard of on the LAN.
type Found struct {
	Name     string
	URL      string
	Pin      string // what it announced; the pairing checks it, not this
	LastSeen time.Time
}

type discovery struct {
	now   chan struct{} // a person asked: browse now
	mu    sync.Mutex
	found map[string]Found // by announced name
}

var quiet = log.New(io.Discard, "", 0)

// announce answers DNS-SD queries for this board until ctx ends.
func (s *Service) announce(ctx context.Context) error {
	_, portText, _ := net.SplitHostPort(s.ln.Addr().String())
	port, _ := strconv.Atoi(portText)
	host, _ := osHostname()
	svc, err := mdns.NewMDNSService(s.Name, ServiceType, "", host+".local.", port, localIPs(),
		[]string{"url=" + s.CardURL(), "name=" + s.Name, "pin=" + s.id.Pin})
	if err != nil {
		return err
	}
	srv, err := mdns.NewServer(&mdns.Config{Zone: svc, Logger: quiet})
	if err != nil {
		return err
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		<-ctx.Done()
		srv.Shutdown()
	}()
	return nil
}

// browse asks who is there every DiscoverEvery, and when a person lists
// the boards (at most every browseTimeout), until ctx ends.
func (s *Service) browse(ctx context.Context) {
	for {
		s.browseOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(s.DiscoverEvery):
		case <-s.disc.now:
		}
	}
}

// browseSoon asks the LAN again now, unless a query is under way.
func (s *Service) browseSoon() {
	select {
	case s.disc.now <- struct{}{}:
	default:
	}
}

func (s *Service) browseOnce(ctx context.Context) {
	entries := make(chan *mdns.ServiceEntry, maxFound)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e := range entries {
			s.heard(e)
		}
	}()
	q := mdns.DefaultParams(ServiceType)
	q.Entries, q.Timeout, q.Logger, q.DisableIPv6 = entries, browseTimeout, quiet, true
	mdns.QueryContext(ctx, q)
	close(entries)
	<-done
}

// heard records an announcement, if it is well formed; this board's own
// and one past the bound are not.
func (s *Service) heard(e *mdns.ServiceEntry) {
	f, ok := foundOf(e.InfoFields)
	if !ok || f.Pin == s.id.Pin {
		return
	}
	f.LastSeen = time.Now().UTC()
	s.disc.mu.Lock()
	defer s.disc.mu.Unlock()
	if s.disc.found == nil {
		s.disc.found = map[string]Found{}
	}
	for k, o := range s.disc.found {
		if time.Since(o.LastSeen) > forgetFound {
			delete(s.disc.found, k)
		}
	}
	if _, ok := s.disc.found[f.Name]; !ok && len(s.disc.found) >= maxFound {
		return
	}
	s.disc.found[f.Name] = f
}

// foundOf reads an announcement's TXT fields (url=, name=, pin=); ok is
// false unless all three are well formed.
func foundOf(fields []string) (f Found, ok bool) {
	for _, kv := range fields {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "url":
			f.URL = v
		case "name":
			f.Name = v
		case "pin":
			f.Pin = v
		}
	}
	if !validName(f.Name) || !validURL(f.URL) || !isHexPin(f.Pin) {
		return Found{}, false
	}
	return f, true
}

func isHexPin(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Found are the boards heard of on the LAN, by name.
func (s *Service) Found() map[string]Found {
	s.disc.mu.Lock()
	defer s.disc.mu.Unlock()
	out := make(map[string]Found, len(s.disc.found))
	for k, f := range s.disc.found {
		if time.Since(f.LastSeen) <= forgetFound {
			out[k] = f
		}
	}
	return out
}

// localIPs are the addresses this board is announced at: every up,
// multicast-capable interface's IPv4 ones.
func localIPs() []net.IP {
	var out []net.IP
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagMulticast == 0 {
			continue
		}
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil {
				out = append(out, n.IP)
			}
		}
	}
	if len(out) == 0 {
		out = append(out, net.IPv4(127, 0, 0, 1))
	}
	return out
}
