package telegram

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/clawedge/clawedge/internal/cooldown"
)

// Pairing is rate limited so that a code cannot be guessed and the owner's console
// cannot be flooded: a code is void after maxPairAttempts wrong guesses; a user whose
// code was voided or left to expire waits a cooldown that doubles each time; and no
// more than maxCodesPerHour codes are issued in any hour, past which pairing pauses
// for everyone, again for a doubling time. Only the start of a cooldown is told to
// the owner (one line), not each refused attempt. All of it is in the store, so a
// restart resets nothing.
//
// With 10^6 codes, 5 guesses each and at most 6 codes an hour, a stranger's odds are
// 3 in 100,000 per hour at best, and shrink as the cooldowns grow.

// PairingTTL is how long a pairing code is valid.
const PairingTTL = 10 * time.Minute

const (
	maxPairAttempts = 5                // wrong codes before a code is void
	maxPairPending  = 5                // codes waiting at once
	maxCodesPerHour = 6                // codes issued in any hour, for everyone
	userCooldown    = 10 * time.Minute // a user's first cooldown; each next one doubles
	globalCooldown  = time.Hour        // the first pause for everyone; doubles likewise
)

// pairState is what pairing keeps in the store (kv telegram/pairing).
type pairState struct {
	Pending map[int64]*pairCode          `json:"pending,omitempty"`
	Users   map[int64]*cooldown.Cooldown `json:"users,omitempty"` // per user, once one started
	Global  cooldown.Cooldown            `json:"global"`
	Issued  []time.Time                  `json:"issued,omitempty"` // codes issued in the last hour
}

type pairCode struct {
	Code     string    `json:"code"`
	Expires  time.Time `json:"expires"`
	Attempts int       `json:"attempts"` // wrong guesses so far
}

// pairOutcome is what a /pair (with or without a code) came to.
type pairOutcome int

const (
	pairIssued    pairOutcome = iota // a fresh code for the owner to hand out
	pairWaiting                      // the user's code is still pending
	pairFull                         // too many codes pending
	pairPaused                       // a cooldown: this user's or everyone's
	pairNoRequest                    // a code, but none was asked for
	pairWrong                        // a wrong code; more tries left
	pairVoid                         // too many wrong codes, or expired
	pairOK                           // paired
)

// pairReply is the outcome of a /pair, what the owner is to be told (a new code,
// the lines of cooldowns that started), and until when a pause lasts.
type pairReply struct {
	outcome pairOutcome
	req     PairingRequest // pairIssued
	notices []string       // cooldowns that started: one line each for the owner
	until   time.Time      // pairPaused
}

func (a *access) loadPairing() error {
	raw, found, err := a.st.Get(kvNamespace, kvPairing)
	if err != nil {
		return err
	}
	if found {
		if err := json.Unmarshal(raw, &a.pairing); err != nil {
			return fmt.Errorf("telegram: pairing state in the store does not decode: %w", err)
		}
	}
	return nil
}

// savePairing writes the state; called with a.mu held, before anyone is told.
func (a *access) savePairing() error {
	raw, err := json.Marshal(a.pairing)
	if err != nil {
		return err
	}
	return a.st.Put(kvNamespace, kvPairing, raw)
}

// tidy drops what time has made moot: expired codes (each starting its user's
// cooldown, as a void code does), issue times over an hour old, forgotten cooldowns.
// It returns the notices of cooldowns it started, and whether anything changed.
func (a *access) tidy(now time.Time) (notices []string, changed bool) {
	p := &a.pairing
	for id, c := range p.Pending {
		if now.After(c.Expires) {
			delete(p.Pending, id)
			notices = append(notices, a.strike(id, now, "let a pairing code expire"))
			changed = true
		}
	}
	kept := p.Issued[:0]
	for _, t := range p.Issued {
		if now.Sub(t) < time.Hour {
			kept = append(kept, t)
		}
	}
	changed = changed || len(kept) != len(p.Issued)
	p.Issued = kept
	for id, c := range p.Users {
		if c.Forgotten(now) {
			delete(p.Users, id)
			changed = true
		}
	}
	if p.Global.Strikes > 0 && p.Global.Forgotten(now) {
		p.Global = cooldown.Cooldown{}
		changed = true
	}
	return notices, changed
}

// strike starts user id's next cooldown and returns the owner's line about it.
func (a *access) strike(id int64, now time.Time, why string) string {
	p := &a.pairing
	if p.Users == nil {
		p.Users = map[int64]*cooldown.Cooldown{}
	}
	c := p.Users[id]
	if c == nil {
		c = &cooldown.Cooldown{}
		p.Users[id] = c
	}
	d := c.Start(now, userCooldown)
	return fmt.Sprintf("telegram: user %d %s; no pairing for them for %s (until %s), each further time twice as long.",
		id, why, d, c.Until.Local().Format("15:04"))
}

// request handles /pair without a code from user u.
func (a *access) request(u User) (pairReply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	notices, changed := a.tidy(now)
	r, err := a.requestLocked(u, now)
	if err != nil {
		return pairReply{}, err
	}
	r.notices = append(notices, r.notices...)
	if changed || r.outcome == pairIssued || len(r.notices) > 0 {
		if err := a.savePairing(); err != nil {
			return pairReply{}, err
		}
	}
	return r, nil
}

func (a *access) requestLocked(u User, now time.Time) (pairReply, error) {
	p := &a.pairing
	if c := p.Users[u.ID]; c != nil && c.Active(now) {
		return pairReply{outcome: pairPaused, until: c.Until}, nil
	}
	if p.Global.Active(now) {
		return pairReply{outcome: pairPaused, until: p.Global.Until}, nil
	}
	if _, ok := p.Pending[u.ID]; ok {
		return pairReply{outcome: pairWaiting}, nil
	}
	if len(p.Pending) >= maxPairPending {
		return pairReply{outcome: pairFull}, nil
	}
	if len(p.Issued) >= maxCodesPerHour {
		d := p.Global.Start(now, globalCooldown)
		return pairReply{outcome: pairPaused, until: p.Global.Until,
			notices: []string{fmt.Sprintf("telegram: %d pairing codes were issued within an hour; pairing is paused for everyone for %s (until %s), each further time twice as long.",
				len(p.Issued), d, p.Global.Until.Local().Format("15:04"))}}, nil
	}
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return pairReply{}, err
	}
	c := &pairCode{Code: fmt.Sprintf("%06d", n.Int64()), Expires: now.Add(PairingTTL)}
	if p.Pending == nil {
		p.Pending = map[int64]*pairCode{}
	}
	p.Pending[u.ID] = c
	p.Issued = append(p.Issued, now)
	return pairReply{outcome: pairIssued,
		req: PairingRequest{UserID: u.ID, Username: u.Username, Name: u.FirstName, Code: c.Code, Expires: c.Expires}}, nil
}

// redeem checks code for user u and, when right, pairs u durably.
func (a *access) redeem(u User, code string) (pairReply, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	notices, changed := a.tidy(now)
	p := &a.pairing
	var r pairReply
	c, pending := p.Pending[u.ID]
	cool := p.Users[u.ID]
	switch {
	case !pending && cool != nil && cool.Active(now):
		// Voided or expired: say when to come back (not counted: nothing to guess).
		r = pairReply{outcome: pairPaused, until: cool.Until}
	case !pending:
		r = pairReply{outcome: pairNoRequest}
	case subtle.ConstantTimeCompare([]byte(code), []byte(c.Code)) != 1:
		c.Attempts++
		changed = true
		r = pairReply{outcome: pairWrong}
		if c.Attempts >= maxPairAttempts {
			delete(p.Pending, u.ID)
			notices = append(notices, a.strike(u.ID, now, fmt.Sprintf("sent %d wrong pairing codes", c.Attempts)))
			r = pairReply{outcome: pairVoid}
		}
	default:
		if err := a.pairLocked(u, now); err != nil {
			return pairReply{}, err
		}
		delete(p.Pending, u.ID)
		delete(p.Users, u.ID)
		changed = true
		r = pairReply{outcome: pairOK}
	}
	r.notices = notices
	if changed {
		// Durable before the user is told: a guess counted must stay counted.
		if err := a.savePairing(); err != nil {
			return pairReply{}, err
		}
	}
	return r, nil
}

// pairLocked adds u to the paired users, durably.
func (a *access) pairLocked(u User, now time.Time) error {
	next := map[int64]PairedUser{}
	for id, pu := range a.paired {
		next[id] = pu
	}
	next[u.ID] = PairedUser{ID: u.ID, Username: u.Username, Name: u.FirstName, Since: now.UTC()}
	list := make([]PairedUser, 0, len(next))
	for _, pu := range next {
		list = append(list, pu)
	}
	slices.SortFunc(list, func(x, y PairedUser) int { return x.Since.Compare(y.Since) })
	raw, err := json.Marshal(list)
	if err != nil {
		return err
	}
	// Durable before the user is told: a pairing that was acknowledged must survive.
	if err := a.st.Put(kvNamespace, kvPaired, raw); err != nil {
		return err
	}
	a.paired = next
	return nil
}
