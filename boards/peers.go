package boards

// This file: the paired boards and the codes waiting to pair one, kept as
// the dashboard keeps its browsers (channels/web/sessions.go): a code is
// one-time, valid for CodeTTL; after cooldown.MaxWrong wrong ones every code is
// refused for a cooldown that doubles each time (internal/cooldown); the
// peers and the cooldown are in the store, so a restart resets neither.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/clawedge/clawedge/internal/cooldown"
)

const (
	// CodeTTL is how long a pairing code is valid.
	CodeTTL    = 5 * time.Minute
	codeDigits = 8
	maxPending = 4
	maxPeers   = 64
)

// Peer is a paired board as this one keeps it.
type Peer struct {
	// Name: here its principal is board:NAME and its tools NAME.ns/tool.
	Name string `json:"name"`
	// Pin is the SHA-256 of its certificate, pinned at pairing.
	Pin string `json:"pin"`
	// URL is where it serves A2A ("": it serves nothing; it only calls).
	URL    string    `json:"url,omitempty"`
	Paired time.Time `json:"paired"`
	// LastSeen is its last answer (or request), kept in memory between
	// saves of the state.
	LastSeen time.Time `json:"last_seen,omitzero"`
}

type peersState struct {
	Peers            map[string]*Peer `json:"peers,omitempty"`
	cooldown.Guesses                  // wrong codes and the cooldown, as the dashboard's
}

type pendingCode struct {
	code    string
	expires time.Time
}

// Peers holds the paired boards and the codes waiting to pair one.
type Peers struct {
	kv  KV
	now func() time.Time

	mu    sync.Mutex
	st    peersState
	codes []pendingCode
}

// Errors of pairing.
var (
	ErrWrongCode = errors.New("wrong or expired pairing code")
	ErrFull      = errors.New("too many paired boards or waiting codes; unpair some (clawedge board rm NAME)")
)

// CooldownError is a refused pairing during a cooldown.
type CooldownError = cooldown.PausedError

// OpenPeers reads the paired boards from kv; now is the clock (nil: time.Now).
func OpenPeers(kv KV, now func() time.Time) (*Peers, error) {
	if now == nil {
		now = time.Now
	}
	p := &Peers{kv: kv, now: now}
	raw, found, err := kv.Get(kvBucket, kvPeers)
	if err != nil {
		return nil, err
	}
	if found {
		if err := json.Unmarshal(raw, &p.st); err != nil {
			return nil, fmt.Errorf("boards: the paired boards in the store do not decode: %w", err)
		}
	}
	if p.st.Peers == nil {
		p.st.Peers = map[string]*Peer{}
	}
	return p, nil
}

func (p *Peers) save() error {
	raw, err := json.Marshal(p.st)
	if err != nil {
		return err
	}
	return p.kv.Put(kvBucket, kvPeers, raw)
}

// Code issues a one-time pairing code.
func (p *Peers) Code() (code string, expires time.Time, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	p.dropExpired(now)
	if len(p.codes) >= maxPending || len(p.st.Peers) >= maxPeers {
		return "", time.Time{}, ErrFull
	}
	n, err := rand.Int(rand.Reader, big.NewInt(100_000_000))
	if err != nil {
		return "", time.Time{}, err
	}
	code = fmt.Sprintf("%0*d", codeDigits, n)
	expires = now.Add(CodeTTL)
	p.codes = append(p.codes, pendingCode{code: code, expires: expires})
	return code, expires, nil
}

func (p *Peers) dropExpired(now time.Time) {
	p.codes = slices.DeleteFunc(p.codes, func(c pendingCode) bool { return !now.Before(c.expires) })
}

// PausedUntil is the end of the running cooldown (zero: none).
func (p *Peers) PausedUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.PausedUntil(p.now())
}

// Redeem pairs the board that proved it knows a waiting code: proof is
// Proof(code, "a", clientPin, serverPin, name), made over the two
// certificates of this very connection, so a machine in the middle (two
// connections, two other pins) cannot pass the code on. It returns the
// code, for the answer's own proof. A wrong proof counts towards the
// cooldown; during one every proof is refused, the right one too.
func (p *Peers) Redeem(proof []byte, clientPin, serverPin string, peer Peer) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if err := p.st.Check(now); err != nil {
		return "", err
	}
	p.dropExpired(now)
	at := -1
	for i, c := range p.codes { // every code compared, in constant time
		want := Proof(c.code, "a", clientPin, serverPin, peer.Name)
		if subtle.ConstantTimeCompare(want, proof) == 1 {
			at = i
		}
	}
	if at < 0 {
		p.st.Miss(now)
		if err := p.save(); err != nil {
			return "", err
		}
		return "", ErrWrongCode
	}
	code := p.codes[at]
	if err := p.addLocked(peer, clientPin, now); err != nil {
		return "", err
	}
	p.st.Hit()
	if err := p.save(); err != nil {
		delete(p.st.Peers, peer.Name)
		return "", err
	}
	p.codes = slices.Delete(p.codes, at, at+1) // used once
	return code.code, nil
}

// Add pins a board this one paired with (clawedge board add).
func (p *Peers) Add(peer Peer) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.addLocked(peer, peer.Pin, p.now()); err != nil {
		return err
	}
	if err := p.save(); err != nil {
		delete(p.st.Peers, peer.Name)
		return err
	}
	return nil
}

func (p *Peers) addLocked(peer Peer, pin string, now time.Time) error {
	if old, ok := p.st.Peers[peer.Name]; ok && old.Pin != pin {
		return fmt.Errorf("a board named %s is already paired with another key; unpair it first (clawedge board rm %s)", peer.Name, peer.Name)
	}
	for _, o := range p.st.Peers {
		if o.Pin == pin && o.Name != peer.Name {
			return fmt.Errorf("that board is already paired as %s", o.Name)
		}
	}
	if len(p.st.Peers) >= maxPeers {
		return ErrFull
	}
	peer.Pin, peer.Paired, peer.LastSeen = pin, now.UTC(), now.UTC()
	p.st.Peers[peer.Name] = &peer
	return nil
}

// Remove unpairs name at once; it reports whether it was paired.
func (p *Peers) Remove(name string) (Peer, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, ok := p.st.Peers[name]
	if !ok {
		return Peer{}, false, nil
	}
	delete(p.st.Peers, name)
	if err := p.save(); err != nil {
		p.st.Peers[name] = old
		return Peer{}, false, err
	}
	return *old, true, nil
}

// ByPin is the paired board whose certificate has pin.
func (p *Peers) ByPin(pin string) (Peer, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.st.Peers {
		if subtle.ConstantTimeCompare([]byte(o.Pin), []byte(pin)) == 1 {
			return *o, true
		}
	}
	return Peer{}, false
}

// Get is the paired board name.
func (p *Peers) Get(name string) (Peer, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	o, ok := p.st.Peers[name]
	if !ok {
		return Peer{}, false
	}
	return *o, true
}

// Seen records an answer from (or a request of) name; in memory only.
func (p *Peers) Seen(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := p.st.Peers[name]; ok {
		o.LastSeen = p.now().UTC()
	}
}

// List is the paired boards, by name.
func (p *Peers) List() []Peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Peer, 0, len(p.st.Peers))
	for _, o := range p.st.Peers {
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Proof is the HMAC-SHA256, keyed by the pairing code, of who proves it
// ("a": the board redeeming the code, "b": the board that issued it), the
// two certificates' pins and the redeeming board's name.
func Proof(code, who, clientPin, serverPin, name string) []byte {
	m := hmac.New(sha256.New, []byte(code))
	fmt.Fprintf(m, "clawedge-board-pair\x00%s\x00%s\x00%s\x00%s", who, clientPin, serverPin, name)
	return m.Sum(nil)
}

// ProofHex is Proof in hex, as the pairing request carries it.
func ProofHex(code, who, clientPin, serverPin, name string) string {
	return hex.EncodeToString(Proof(code, who, clientPin, serverPin, name))
}
