package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/store"
)

// Key names a session: one per chat, that is per channel and user
// ("telegram\x00telegram:42 (@ann)").
func Key(channel, user string) string { return channel + "\x00" + user }

// record is a session's state as stored: small, rewritten at every transition. JSON,
// like the audit trail: readable in the field, new fields need no migration.
type record struct {
	Channel string    `json:"ch"`
	User    string    `json:"user"`
	State   State     `json:"state"`
	Turns   int       `json:"turns"`
	Updated time.Time `json:"t"`
	// Turn is the turn in progress, or the last one (with Stop set).
	Turn *turnRecord `json:"turn,omitempty"`
	// Notice is told to the user at their next message: what happened to a turn that
	// a restart interrupted.
	Notice string `json:"notice,omitempty"`
	// Totals over the session's life.
	Tokens int     `json:"tokens,omitempty"`
	Cost   float64 `json:"cost,omitempty"`
}

type turnRecord struct {
	N       int          `json:"n"`
	Text    string       `json:"text"` // the user's message, capped
	Started time.Time    `json:"start"`
	Step    int          `json:"step"`
	Calls   []callRecord `json:"calls,omitempty"`
	Stop    string       `json:"stop,omitempty"` // why it ended: "answered", "iterations", "restart", ...
}

// callRecord is one call the model proposed, and what became of it.
type callRecord struct {
	Call   string `json:"call"`   // command-language form, capped
	Status string `json:"status"` // see the call* constants
	Audit  uint64 `json:"audit,omitempty"`
	Result string `json:"result,omitempty"` // one line
	// Approval is the id of the approval request, while it waits.
	Approval string `json:"approval,omitempty"`
}

// Call statuses.
const (
	callRefused  = "refused" // invalid, unknown, or a repeat: never run
	callDenied   = "denied"  // the policy or a person said no
	callExpired  = "expired" // nobody approved in time
	callAsking   = "asking"  // waiting for approval
	callStarted  = "started" // audit intent recorded (or about to be): the effect may have happened
	callOK       = "ok"      // ran, succeeded
	callFailed   = "failed"  // ran, failed
	maxTextField = 2 << 10
)

// history is a session's conversation as stored: the messages of finished turns and a
// deterministic summary of the ones compacted away.
type history struct {
	Summary  string        `json:"summary,omitempty"`
	Messages []llm.Message `json:"messages,omitempty"`
}

// session is a chat's state in memory. mu serializes its turns: one at a time per chat.
type session struct {
	key   string
	users int // callers holding it (Agent.session/release), under Agent.mu
	mu    sync.Mutex
	rec   record
	h     history

	snapMu sync.Mutex
	snap   record // see recSnapshot
}

func (s *session) encode() ([]byte, error) { return json.Marshal(&s.rec) }

func (s *session) encodeHistory() ([]byte, error) { return json.Marshal(&s.h) }

func decodeSession(key string, state, hist []byte) (*session, error) {
	s := &session{key: key}
	if len(state) > 0 {
		if err := json.Unmarshal(state, &s.rec); err != nil {
			return nil, fmt.Errorf("session %s: state: %w", printableKey(key), err)
		}
	}
	if len(hist) > 0 {
		if err := json.Unmarshal(hist, &s.h); err != nil {
			return nil, fmt.Errorf("session %s: history: %w", printableKey(key), err)
		}
	}
	return s, nil
}

// printableKey shows a key as channel/user.
func printableKey(key string) string { return strings.ReplaceAll(key, "\x00", " ") }

// oneLine is s on one line, at most max bytes.
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	return store.CapString(s, max)
}

// shorten keeps the first sentence (or clause, before "; ") of s, at most about max
// bytes, for the local model's tool list.
func shorten(s string, max int) string {
	if i := strings.Index(s, ". "); i > 0 {
		s = s[:i+1]
	}
	if i := strings.Index(s, "; "); i > 0 {
		s = s[:i] + "."
	}
	return clip(s, max)
}
