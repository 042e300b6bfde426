package boards

// This file: pairing from this side (clawedge board add) and unpairing
// (clawedge board rm), each a call on the one call path (tools.go).

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Pair redeems code at the board serving url and pins it here as name. The
// board's certificate is taken from the connection and trusted only once
// its answer proves it knew the code for this very connection.
func (s *Service) Pair(ctx context.Context, name, url, code string) (Peer, error) {
	if url == "" {
		f, ok := s.Found()[name]
		if !ok {
			return Peer{}, fmt.Errorf("no board named %s was found on the LAN (boards.discovery); give its URL, as `clawedge board pair` printed it there", name)
		}
		url = f.URL
	}
	if !validName(name) {
		return Peer{}, fmt.Errorf("%q is not a board's name: a lower-case letter, then lower-case letters, digits, _ and -, at most 32", name)
	}
	if !validURL(url) {
		return Peer{}, fmt.Errorf("%q is not an https://host:port URL", url)
	}
	if _, ok := s.peers.Get(name); ok {
		return Peer{}, fmt.Errorf("a board named %s is already paired; unpair it first (clawedge board rm %s)", name, name)
	}
	code = strings.TrimSpace(code)
	var serverPin string
	client := &http.Client{
		Timeout: s.Timeout,
		Transport: &http.Transport{
			Proxy: nil,
			TLSClientConfig: &tls.Config{
				Certificates:       []tls.Certificate{s.id.Cert},
				MinVersion:         tls.VersionTLS13,
				InsecureSkipVerify: true, // the answer's proof is the check
				VerifyConnection: func(cs tls.ConnectionState) error {
					if len(cs.PeerCertificates) == 0 {
						return errors.New("no certificate")
					}
					serverPin = PinOf(cs.PeerCertificates[0].Raw)
					return nil
				},
			},
			DisableKeepAlives: true, // one connection: the one the proof is over
		},
	}
	// The proof needs the server's pin before the request: a first
	// connection learns it, the request's own must show the same one.
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	probe, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(url, "/")+CardPath, nil)
	if err != nil {
		return Peer{}, err
	}
	resp, err := client.Do(probe)
	if err != nil {
		return Peer{}, fmt.Errorf("board at %s: %v", url, shortErr(err))
	}
	resp.Body.Close()
	first := serverPin
	body, _ := json.Marshal(PairRequest{Name: s.Name, URL: s.CardURL(), Proof: ProofHex(code, "a", s.id.Pin, first, s.Name)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(url, "/")+PairPath, bytes.NewReader(body))
	if err != nil {
		return Peer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err = client.Do(req)
	if err != nil {
		return Peer{}, fmt.Errorf("board at %s: %v", url, shortErr(err))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return Peer{}, fmt.Errorf("board at %s refused: %s", url, strings.TrimSpace(string(raw)))
	}
	if serverPin != first {
		return Peer{}, errors.New("the board's certificate changed between two connections: not paired")
	}
	var ans PairAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Peer{}, fmt.Errorf("board at %s: its answer does not decode", url)
	}
	proof, err := hex.DecodeString(ans.Proof)
	if err != nil || !hmac.Equal(proof, Proof(code, "b", s.id.Pin, serverPin, s.Name)) {
		return Peer{}, errors.New("the board did not prove it knew the code: something between the boards may be listening; not paired")
	}
	p := Peer{Name: name, Pin: serverPin, URL: url}
	if err := s.peers.Add(p); err != nil {
		return Peer{}, err
	}
	s.remoteOf(name)
	s.wake()
	p, _ = s.peers.Get(name)
	s.Log.Info(fmt.Sprintf("boards: paired with %s (%s, announced as %s)", name, url, ans.Name))
	return p, nil
}

// Unpair forgets name here at once, then tells it when it answers (within
// a few seconds): it then forgets this board too. told says whether it did.
func (s *Service) Unpair(ctx context.Context, name string) (told bool, err error) {
	p, ok, err := s.forget(name)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, fmt.Errorf("no board named %s is paired", name)
	}
	if p.URL == "" {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(p.URL, "/")+UnpairPath, nil)
	if err != nil {
		return false, nil
	}
	resp, err := s.client(p).Do(req)
	if err != nil {
		return false, nil
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusNoContent, nil
}

// Status is a board as `clawedge board list` shows it.
type Status struct {
	Name     string    `json:"name"`
	URL      string    `json:"url,omitempty"`
	State    string    `json:"state"` // up, down, paired (it serves nothing), found (on the LAN, not paired)
	LastSeen time.Time `json:"last_seen,omitzero"`
	Tools    int       `json:"tools"`
	Pin      string    `json:"pin,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// List is the paired boards and their states, and the boards found on the
// LAN; it asks the LAN again, for the next list.
func (s *Service) List() []Status {
	if s.Discover {
		s.browseSoon()
	}
	var out []Status
	for _, p := range s.peers.List() {
		st := Status{Name: p.Name, URL: p.URL, LastSeen: p.LastSeen, Pin: p.Pin, State: "paired"}
		if p.URL != "" {
			r := s.remoteOf(p.Name)
			up, why := r.state()
			r.mu.Lock()
			st.Tools = len(r.specs)
			r.mu.Unlock()
			st.State, st.Error = "up", ""
			if !up {
				st.State, st.Error = "down", why
			}
		}
		out = append(out, st)
	}
	for _, f := range s.Found() {
		if _, paired := s.peers.Get(f.Name); paired || s.pairedPin(f.Pin) {
			continue
		}
		out = append(out, Status{Name: f.Name, URL: f.URL, State: "found", LastSeen: f.LastSeen, Pin: f.Pin})
	}
	return out
}

// pairedPin reports whether a board with pin is paired (under any name).
func (s *Service) pairedPin(pin string) bool {
	_, ok := s.peers.ByPin(pin)
	return ok
}
