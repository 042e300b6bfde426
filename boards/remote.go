package boards

// This file: a paired board as seen from here: its HTTP client (mutual TLS,
// its certificate pinned), whether it answers, and its tools registered
// as NAME.ns/tool. A prober asks each board for its tools every ProbeEvery;
// a call to a board that stopped answering fails at once, naming it and
// when it was last seen, and a board that answers again is used again.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

const (
	probeTimeout = 3 * time.Second
	dialTimeout  = 3 * time.Second
	maxAnswer    = 1 << 20  // bytes of a tools list
	specsKey     = "specs:" // + board: the tools it last had
)

type remote struct {
	name string
	wake func()

	mu      sync.Mutex
	up      bool
	lastErr string
	specs   []grammar.ToolSpec
	etag    string // of specs, as the board sent them ("": none yet)
}

func (s *Service) remoteOf(name string) *remote {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.remotes[name]
	if !ok {
		r = &remote{name: name, wake: s.wake}
		s.remotes[name] = r
	}
	return r
}

// wake asks the prober to probe now (a board just paired, or a call found
// one silent).
func (s *Service) wake() {
	select {
	case s.wakeC <- struct{}{}:
	default:
	}
}

// restore registers the tools the board last had, unavailable until it answers.
func (r *remote) restore(s *Service) {
	raw, found, err := s.kv.Get(kvBucket, specsKey+r.name)
	if err != nil || !found {
		return
	}
	var specs []grammar.ToolSpec
	if json.Unmarshal(raw, &specs) != nil {
		return
	}
	s.register(r, specs)
}

// state reports whether the board answered its last probe or call, and
// if not, why.
func (r *remote) state() (up bool, lastErr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.up, r.lastErr
}

func (r *remote) set(up bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.up = up
	r.lastErr = ""
	if err != nil {
		r.lastErr = err.Error()
	}
}

// client is the HTTP client of peer: this board's certificate offered, the
// peer's pinned one required, every wait bounded.
func (s *Service) client(p Peer) *http.Client {
	pin := p.Pin
	return &http.Client{
		Transport: &http.Transport{
			TLSClientConfig: &tls.Config{
				Certificates: []tls.Certificate{s.id.Cert},
				MinVersion:   tls.VersionTLS13,
				// The chain and name are not checked: the board is known by
				// its pin, checked below, and by nothing else.
				InsecureSkipVerify: true,
				VerifyConnection: func(cs tls.ConnectionState) error {
					if len(cs.PeerCertificates) == 0 || PinOf(cs.PeerCertificates[0].Raw) != pin {
						return fmt.Errorf("board %s answered with another certificate than the one pinned at pairing", p.Name)
					}
					return nil
				},
			},
			DialContext:           (&net.Dialer{Timeout: dialTimeout}).DialContext,
			TLSHandshakeTimeout:   dialTimeout,
			ResponseHeaderTimeout: s.Timeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       30 * time.Second,
			Proxy:                 nil, // a board on the LAN, never through a proxy
		},
		Timeout: s.Timeout,
	}
}

func (s *Service) probeLoop(ctx context.Context) {
	t := time.NewTicker(s.ProbeEvery)
	defer t.Stop()
	for {
		s.probeAll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wakeC:
		}
	}
}

func (s *Service) probeAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, p := range s.peers.List() {
		if p.URL == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.probe(ctx, p)
		}()
	}
	wg.Wait()
}

// probe asks p for the tools it offers this board, and registers them.
func (s *Service) probe(ctx context.Context, p Peer) {
	r := s.remoteOf(p.Name)
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	r.mu.Lock()
	etag := r.etag
	r.mu.Unlock()
	specs, newTag, err := s.fetchTools(ctx, p, etag)
	if err == errNotModified {
		r.set(true, nil)
		s.peers.Seen(p.Name)
		return
	}
	if err != nil {
		if up, _ := r.state(); up {
			s.Log.Warn(fmt.Sprintf("boards: %s stopped answering: %v", p.Name, err))
		}
		r.set(false, err)
		return
	}
	if up, _ := r.state(); !up {
		s.Log.Info("boards: " + p.Name + " answers")
	}
	r.set(true, nil)
	s.peers.Seen(p.Name)
	s.register(r, specs)
	r.mu.Lock()
	r.etag = newTag
	r.mu.Unlock()
	raw, _ := json.Marshal(specs)
	s.kv.Put(kvBucket, specsKey+p.Name, raw)
}

// errNotModified: the board's tools are the ones it last sent.
var errNotModified = errors.New("not modified")

// fetchTools asks p for its tools, unless they are still those of etag.
func (s *Service) fetchTools(ctx context.Context, p Peer, etag string) ([]grammar.ToolSpec, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(p.URL, "/")+ToolsPath, nil)
	if err != nil {
		return nil, "", err
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := s.client(p).Do(req)
	if err != nil {
		return nil, "", unwrapURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && etag != "" {
		return nil, etag, errNotModified
	}
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("%s answered %s", p.Name, resp.Status)
	}
	var specs []grammar.ToolSpec
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(&specs); err != nil {
		return nil, "", fmt.Errorf("%s's tools do not decode: %w", p.Name, err)
	}
	return specs, resp.Header.Get("ETag"), nil
}

// unwrapURL drops the method and URL an HTTP client's error starts with:
// the message names the board instead.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// register makes specs (the board's own names) its tools here, as
// NAME.ns/tool; a spec that does not check is left out, not trusted.
func (s *Service) register(r *remote, specs []grammar.ToolSpec) {
	r.mu.Lock()
	same := specsEqual(r.specs, specs)
	r.specs = specs
	r.mu.Unlock()
	if same && len(specs) > 0 {
		if _, err := s.Runner.Registry.Lookup(r.name + "." + specs[0].Name); err == nil {
			return
		}
	}
	var ts []tools.Tool
	for _, spec := range specs {
		ns, _, ok := cutNS(spec.Name)
		if !ok || containsDot(ns) {
			continue
		}
		local := spec
		local.Name = r.name + "." + spec.Name
		if local.Check() != nil {
			continue
		}
		ts = append(ts, &remoteTool{s: s, r: r, spec: local, remoteName: spec.Name})
	}
	if err := s.Runner.Registry.ReplaceBoard(r.name, ts); err != nil {
		s.Log.Warn(fmt.Sprintf("boards: %s's tools: %v", r.name, err))
	}
}

func specsEqual(a, b []grammar.ToolSpec) bool {
	if len(a) != len(b) {
		return false
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// forget unpairs name here: its tools go at once.
func (s *Service) forget(name string) (Peer, bool, error) {
	p, ok, err := s.peers.Remove(name)
	if err != nil || !ok {
		return p, ok, err
	}
	s.mu.Lock()
	delete(s.remotes, name)
	s.mu.Unlock()
	if s.Runner != nil {
		s.Runner.Registry.ReplaceBoard(name, nil)
	}
	s.kv.Delete(kvBucket, specsKey+name)
	return p, true, nil
}
