package telegram

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/clawedge/clawedge/store"
)

// Who may talk: the owners (telegram.allow_users), the users paired since (stored), and in
// group chats listed in telegram.allow_chats, their members — but only in messages that
// mention the bot or reply to it. Everybody else gets nothing at all, not even an error:
// a bot that answers strangers tells them it exists and is worth probing.

// Where paired users are kept: one kv key holding the JSON list, so that it can be read
// in one Get (the store's kv has no listing, on purpose).
const (
	kvNamespace = "telegram"
	kvPaired    = "paired_users"
	kvPairing   = "pairing" // pending codes and cooldowns (pairing.go)
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

type access struct {
	st     *store.Store
	owners []int64
	chats  []int64
	now    func() time.Time

	mu      sync.Mutex
	paired  map[int64]PairedUser
	pairing pairState
}

func newAccess(st *store.Store, owners, chats []int64, now func() time.Time) (*access, error) {
	a := &access{st: st, owners: slices.Clone(owners), chats: slices.Clone(chats), now: now,
		paired: map[int64]PairedUser{}}
	if err := a.loadPairing(); err != nil {
		return nil, err
	}
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
