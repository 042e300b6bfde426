package telegram

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/clawedge/clawedge/store"
)

// Who may talk: the owners (telegram.allow_users), the users paired since (stored), and in
// group chats listed in telegram.allow_chats, their members — but only in messages that
// mention the bot or reply to it. Everybody else gets nothing at all, not even an error:
// a bot that answers strangers tells them it exists and is worth probing.

// PairingTTL is how long a pairing code is valid.
const PairingTTL = 10 * time.Minute

// Pairing limits: wrong codes before a code is void, and codes pending at once (so that
// strangers cannot flood the owner's console).
const (
	maxPairAttempts = 5
	maxPairPending  = 5
)

// Where paired users are kept: one kv key holding the JSON list, so that it can be read
// in one Get (the store's kv has no listing, on purpose).
const (
	kvNamespace = "telegram"
	kvPaired    = "paired_users"
)

// PairedUser is a user added by pairing.
type PairedUser struct {
	ID       int64     `json:"id"`
	Username string    `json:"username,omitempty"`
	Name     string    `json:"name,omitempty"`
	Since    time.Time `json:"since"`
}

// PairingRequest is what the owner is shown: who asks, and the code to give them.
type PairingRequest struct {
	UserID   int64
	Username string
	Name     string
	Code     string
	Expires  time.Time
}

// String is the console line (the code is meant to be read by the owner).
func (p PairingRequest) String() string {
	who := fmt.Sprint(p.UserID)
	if p.Username != "" {
		who += " (@" + p.Username + ")"
	} else if p.Name != "" {
		who += " (" + p.Name + ")"
	}
	return fmt.Sprintf("telegram: user %s asks to use this board. If that is someone you trust, tell them to send /pair %s (valid until %s). Otherwise ignore this.",
		who, p.Code, p.Expires.Local().Format("15:04"))
}

type pairCode struct {
	code     string
	expires  time.Time
	attempts int
}

type access struct {
	st     *store.Store
	owners []int64
	chats  []int64
	now    func() time.Time

	mu      sync.Mutex
	paired  map[int64]PairedUser
	pending map[int64]*pairCode
}

func newAccess(st *store.Store, owners, chats []int64, now func() time.Time) (*access, error) {
	a := &access{st: st, owners: slices.Clone(owners), chats: slices.Clone(chats), now: now,
		paired: map[int64]PairedUser{}, pending: map[int64]*pairCode{}}
	raw, found, err := st.Get(kvNamespace, kvPaired)
	if err != nil {
		return nil, err
	}
	if found {
		var list []PairedUser
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("telegram: paired users in the store do not decode: %w", err)
		}
		for _, u := range list {
			a.paired[u.ID] = u
		}
	}
	return a, nil
}

func (a *access) owner(id int64) bool { return slices.Contains(a.owners, id) }

func (a *access) chatAllowed(id int64) bool { return slices.Contains(a.chats, id) }

// userAllowed reports whether id may talk in a private chat.
func (a *access) userAllowed(id int64) bool {
	if a.owner(id) {
		return true
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.paired[id]
	return ok
}

// Paired lists the paired users.
func (a *access) Paired() []PairedUser {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []PairedUser
	for _, u := range a.paired {
		out = append(out, u)
	}
	slices.SortFunc(out, func(x, y PairedUser) int { return x.Since.Compare(y.Since) })
	return out
}

// request makes a code for user u, or returns ok=false when one is pending already
// (fresh=false) or too many are (full=true).
func (a *access) request(u User) (req PairingRequest, fresh, full bool, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for id, p := range a.pending {
		if now.After(p.expires) {
			delete(a.pending, id)
		}
	}
	if _, ok := a.pending[u.ID]; ok {
		return PairingRequest{}, false, false, nil
	}
	if len(a.pending) >= maxPairPending {
		return PairingRequest{}, false, true, nil
	}
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return PairingRequest{}, false, false, err
	}
	code := fmt.Sprintf("%06d", n.Int64())
	p := &pairCode{code: code, expires: now.Add(PairingTTL)}
	a.pending[u.ID] = p
	return PairingRequest{UserID: u.ID, Username: u.Username, Name: u.FirstName, Code: code, Expires: p.expires}, true, false, nil
}

type pairResult int

const (
	pairNoRequest pairResult = iota
	pairWrong
	pairVoid // too many wrong codes, or expired
	pairOK
)

// redeem checks code for user u and, when right, pairs u durably.
func (a *access) redeem(u User, code string) (pairResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	p, ok := a.pending[u.ID]
	if !ok {
		return pairNoRequest, nil
	}
	if a.now().After(p.expires) {
		delete(a.pending, u.ID)
		return pairVoid, nil
	}
	if subtle.ConstantTimeCompare([]byte(code), []byte(p.code)) != 1 {
		p.attempts++
		if p.attempts >= maxPairAttempts {
			delete(a.pending, u.ID)
			return pairVoid, nil
		}
		return pairWrong, nil
	}
	next := map[int64]PairedUser{}
	for id, pu := range a.paired {
		next[id] = pu
	}
	next[u.ID] = PairedUser{ID: u.ID, Username: u.Username, Name: u.FirstName, Since: a.now().UTC()}
	list := make([]PairedUser, 0, len(next))
	for _, pu := range next {
		list = append(list, pu)
	}
	slices.SortFunc(list, func(x, y PairedUser) int { return x.Since.Compare(y.Since) })
	raw, err := json.Marshal(list)
	if err != nil {
		return pairWrong, err
	}
	// Durable before the user is told: a pairing that was acknowledged must survive.
	if err := a.st.Put(kvNamespace, kvPaired, raw); err != nil {
		return pairWrong, err
	}
	a.paired = next
	delete(a.pending, u.ID)
	return pairOK, nil
}
