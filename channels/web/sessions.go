package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/clawedge/clawedge/internal/cooldown"
	"github.com/clawedge/clawedge/tools"
)

// Pairing a browser is pairing a phone: a person at the board (`clawedge web
// pair`) asks the daemon for a one-time code and types it into the browser,
// which gets a session. A stranger on the LAN can only guess codes: 10^8 of
// them, and after cooldown.MaxWrong wrong ones every code is refused for a cooldown
// that doubles each time (internal/cooldown, as Telegram's pairing). Sessions
// and the cooldown are in the store, so a restart resets neither; pending
// codes live only in the daemon (a restart voids them, which is safe), but
// for a code issued to last longer than CodeTTL (the first code of the SD
// image, written to its boot partition for the person holding the card):
// that one is kept in the store, as it is on the card, so that the reboot
// after reading the card does not void it.

const (
	// CodeTTL is how long a pairing code is valid.
	CodeTTL = 5 * time.Minute
	// MaxCodeTTL is the longest a code may be issued for (web/pair's minutes).
	MaxCodeTTL = 24 * time.Hour

	codeDigits  = 8
	maxPending  = 5          // codes waiting at once
	maxSessions = 32         // paired browsers at once
	kvBucket    = "web"      // the store's namespace for the door
	kvState     = "sessions" // its one key: state below, JSON
	tokenBytes  = 32         // a session token's entropy
	nameMax     = 32         // a device name's length

	// DefaultIdle and DefaultMax end a session unused this long, and this
	// long after its pairing (web.session_idle, web.session_max).
	DefaultIdle = 7 * 24 * time.Hour
	DefaultMax  = 90 * 24 * time.Hour
	// useSaveEvery: a session's last use is written to the store at most
	// this often (and a tenth of the idle time, when shorter), not at every
	// request: the card is not worn by browsing, and an idle expiry may
	// come that much early after a restart.
	useSaveEvery = time.Hour
)

// Role is what a paired browser may do: the policy decides with it (the
// caller carries it), so what a role may not do is refused and audited on
// the call path.
type Role = tools.Role

const (
	// Viewer reads: pages, pins, audit, approvals; it never calls.
	Viewer = tools.RoleViewer
	// Operator calls tools like any person, as the policy allows web:<name>.
	Operator = tools.RoleOperator
	// Owner also answers approvals (the authorizer still decides whether it may).
	Owner = tools.RoleOwner
)

// ParseRole reads a role's name.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case Viewer, Operator, Owner:
		return r, nil
	}
	return "", fmt.Errorf("role %q: want viewer, operator or owner", s)
}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// CheckName refuses a device name that would not read well as web:<name> in
// the audit and in policy rules.
func CheckName(n string) error {
	if len(n) > nameMax || !nameRE.MatchString(n) {
		return fmt.Errorf("device name %q: lower-case letters, digits, - and _, at most %d", n, nameMax)
	}
	return nil
}

// Device is one paired browser as `clawedge web list` shows it.
type Device struct {
	Name   string    `json:"name"`
	Role   Role      `json:"role"`
	Paired time.Time `json:"paired"`
	// LastUsed is its last request (as stored: within useSaveEvery); in a
	// store written before it was kept, the time the store was opened.
	LastUsed time.Time `json:"last_used,omitzero"`
}

// session is a paired browser as stored, keyed by the token's SHA-256: the
// store never holds a token that would open a session.
type session struct {
	Device
	CSRF string `json:"csrf"`
	key  string // its key in state.Sessions (not stored: it is the key)
}

type state struct {
	Sessions         map[string]*session `json:"sessions,omitempty"`
	cooldown.Guesses                     // wrong codes and the cooldown ("wrong", "guess")
	// Kept are the codes issued for longer than CodeTTL, until used or expired.
	Kept []kept `json:"kept,omitempty"`
}

// kept is a long-lived code as stored.
type kept struct {
	Code    string    `json:"code"`
	Name    string    `json:"name"`
	Role    Role      `json:"role"`
	Expires time.Time `json:"expires"`
}

type pending struct {
	code    string
	name    string
	role    Role
	expires time.Time
	kept    bool // in state.Kept too
}

// KV is the part of the store the door keeps its state in.
type KV interface {
	Get(bucket, key string) ([]byte, bool, error)
	Put(bucket, key string, value []byte) error
}

// Sessions holds the paired browsers and the codes waiting to pair one.
type Sessions struct {
	kv  KV
	now func() time.Time

	idle, max time.Duration // expiry: unused for idle, or max after pairing
	savedUse  time.Time     // when last uses were last written

	mu    sync.Mutex
	st    state
	codes []pending
}

// Errors of Redeem.
var (
	ErrWrongCode = errors.New("wrong or expired pairing code")
	ErrFull      = errors.New("too many paired browsers or waiting codes; revoke some (clawedge web revoke NAME)")
)

// CooldownError is a refused Redeem during a cooldown.
type CooldownError = cooldown.PausedError

// OpenSessions reads the door's state from kv; now is the clock (nil: time.Now).
func OpenSessions(kv KV, now func() time.Time) (*Sessions, error) {
	if now == nil {
		now = time.Now
	}
	s := &Sessions{kv: kv, now: now, idle: DefaultIdle, max: DefaultMax}
	raw, found, err := kv.Get(kvBucket, kvState)
	if err != nil {
		return nil, err
	}
	if found {
		if err := json.Unmarshal(raw, &s.st); err != nil {
			return nil, fmt.Errorf("web: sessions in the store do not decode: %w", err)
		}
	}
	if s.st.Sessions == nil {
		s.st.Sessions = map[string]*session{}
	}
	s.savedUse = now()
	s.st.Kept = slices.DeleteFunc(s.st.Kept, func(k kept) bool { return !s.savedUse.Before(k.Expires) })
	for _, k := range s.st.Kept {
		s.codes = append(s.codes, pending{code: k.Code, name: k.Name, role: k.Role, expires: k.Expires, kept: true})
	}
	for _, se := range s.st.Sessions {
		// Stored before last uses were kept: a browser in daily use must
		// not be logged out by the upgrade, so its idle time starts now.
		if se.LastUsed.IsZero() {
			se.LastUsed = s.savedUse.UTC()
		}
	}
	return s, nil
}

// SetExpiry ends sessions unused for idle, and any max after its pairing
// (web.session_idle, web.session_max; zero keeps the default).
func (s *Sessions) SetExpiry(idle, max time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if idle > 0 {
		s.idle = idle
	}
	if max > 0 {
		s.max = max
	}
}

// expired reports whether se has ended by now.
func (s *Sessions) expired(se *session, now time.Time) bool {
	used := se.LastUsed
	if used.IsZero() {
		used = se.Paired
	}
	return now.Sub(se.Paired) >= s.max || now.Sub(used) >= s.idle
}

// dropExpiredSessions removes the sessions that have ended, and saves the
// state when it removed any; called with s.mu held.
func (s *Sessions) dropExpiredSessions(now time.Time) error {
	n := 0
	for k, se := range s.st.Sessions {
		if s.expired(se, now) {
			delete(s.st.Sessions, k)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return s.save()
}

// save writes the state; called with s.mu held, before anyone is answered.
func (s *Sessions) save() error {
	raw, err := json.Marshal(s.st)
	if err != nil {
		return err
	}
	return s.kv.Put(kvBucket, kvState, raw)
}

// Pair issues a one-time code that pairs a browser as name with role.
func (s *Sessions) Pair(name string, role Role) (code string, expires time.Time, err error) {
	return s.PairFor(name, role, CodeTTL)
}

// PairFor is Pair with a code valid for ttl (at most MaxCodeTTL); one valid
// longer than CodeTTL is kept in the store until used or expired.
func (s *Sessions) PairFor(name string, role Role, ttl time.Duration) (code string, expires time.Time, err error) {
	if ttl <= 0 || ttl > MaxCodeTTL {
		return "", time.Time{}, fmt.Errorf("a code is valid for a minute to %v, not %v", MaxCodeTTL, ttl)
	}
	if err := CheckName(name); err != nil {
		return "", time.Time{}, err
	}
	if _, err := ParseRole(string(role)); err != nil {
		return "", time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.dropExpired(now)
	if err := s.dropExpiredSessions(now); err != nil {
		return "", time.Time{}, err
	}
	if len(s.codes) >= maxPending || len(s.st.Sessions) >= maxSessions {
		return "", time.Time{}, ErrFull
	}
	n, err := rand.Int(rand.Reader, big.NewInt(100_000_000))
	if err != nil {
		return "", time.Time{}, err
	}
	code = fmt.Sprintf("%0*d", codeDigits, n)
	expires = now.Add(ttl)
	p := pending{code: code, name: name, role: role, expires: expires, kept: ttl > CodeTTL}
	if p.kept {
		s.st.Kept = append(s.st.Kept, kept{Code: code, Name: name, Role: role, Expires: expires.UTC()})
		if err := s.save(); err != nil {
			s.st.Kept = s.st.Kept[:len(s.st.Kept)-1]
			return "", time.Time{}, err
		}
	}
	s.codes = append(s.codes, p)
	return code, expires, nil
}

// Kept is the long-lived code for name still waiting, if any: the SD
// image's first code, shown again on the console after a restart.
func (s *Sessions) Kept(name string) (code string, role Role, expires time.Time, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, p := range s.codes {
		if p.kept && p.name == name && now.Before(p.expires) {
			return p.code, p.role, p.expires, true
		}
	}
	return "", "", time.Time{}, false
}

func (s *Sessions) dropExpired(now time.Time) {
	s.codes = slices.DeleteFunc(s.codes, func(p pending) bool { return !now.Before(p.expires) })
}

// Redeem trades a code for a new session: its token (the cookie) and CSRF
// token. A wrong code counts towards the cooldown; during one every code is
// refused, the right one too, or guessing would simply go on.
func (s *Sessions) Redeem(code string) (token, csrf string, d Device, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if err := s.st.Check(now); err != nil {
		return "", "", Device{}, err
	}
	s.dropExpired(now)
	at := -1
	for i, p := range s.codes { // every code compared, in constant time
		if subtle.ConstantTimeCompare([]byte(p.code), []byte(code)) == 1 {
			at = i
		}
	}
	if at < 0 {
		s.st.Miss(now)
		if err := s.save(); err != nil {
			return "", "", Device{}, err
		}
		return "", "", Device{}, ErrWrongCode
	}
	p := s.codes[at]
	s.dropExpiredSessions(now) // saved below
	keptBefore := s.st.Kept
	if p.kept {
		s.st.Kept = slices.DeleteFunc(slices.Clone(s.st.Kept), func(k kept) bool { return k.Code == p.code })
	}
	if len(s.st.Sessions) >= maxSessions {
		return "", "", Device{}, ErrFull
	}
	token, csrf = randomToken(), randomToken()
	d = Device{Name: p.name, Role: p.role, Paired: now.UTC(), LastUsed: now.UTC()}
	s.st.Sessions[tokenKey(token)] = &session{Device: d, CSRF: csrf}
	s.st.Hit()
	if err := s.save(); err != nil {
		delete(s.st.Sessions, tokenKey(token))
		s.st.Kept = keptBefore
		return "", "", Device{}, err
	}
	s.codes = slices.Delete(s.codes, at, at+1) // used once
	return token, csrf, d, nil
}

// PausedUntil is the end of the running cooldown (zero: none): a person
// issuing a code is told that it cannot be used before then.
func (s *Sessions) PausedUntil() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.st.PausedUntil(s.now())
}

// lookup returns the session of a cookie's token, and records its use. A
// session past its expiry is refused and removed.
func (s *Sessions) lookup(token string) (session, bool) {
	if token == "" || len(token) > 128 {
		return session{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := tokenKey(token)
	se, ok := s.st.Sessions[key]
	if !ok {
		return session{}, false
	}
	now := s.now()
	if s.expired(se, now) {
		delete(s.st.Sessions, key)
		s.save() // refused all the same; a failed save is tried again at the next change
		return session{}, false
	}
	se.LastUsed = now.UTC()
	if now.Sub(s.savedUse) >= min(useSaveEvery, s.idle/10) {
		if s.save() == nil {
			s.savedUse = now
		}
	}
	out := *se
	out.key = key
	return out, true
}

// List returns the paired browsers, by name, with their last use; sessions
// past their expiry are removed first.
func (s *Sessions) List() []Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropExpiredSessions(s.now()) // a failed save: they are gone here all the same
	out := make([]Device, 0, len(s.st.Sessions))
	for _, se := range s.st.Sessions {
		out = append(out, se.Device)
	}
	slices.SortFunc(out, func(a, b Device) int {
		if a.Name != b.Name {
			if a.Name < b.Name {
				return -1
			}
			return 1
		}
		return a.Paired.Compare(b.Paired)
	})
	return out
}

// Revoke ends every session of the device name at once (the next request of
// such a browser is refused) and returns how many there were.
func (s *Sessions) Revoke(name string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, se := range s.st.Sessions {
		if se.Name == name {
			delete(s.st.Sessions, k)
			n++
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("no paired browser is named %q", name)
	}
	return n, s.save()
}

func randomToken() string {
	b := make([]byte, tokenBytes)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return hex.EncodeToString(b)
}

func tokenKey(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}
