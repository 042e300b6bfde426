package localmodel

// This file: which part of a prompt the runner saves as the prompt state
// that a new runner (after a restart, a boot or an idle unload) starts from.

import (
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/localmodel/chat"
)

// savedPrefix decides what the runner's saved prompt state holds. The state
// to keep is the prompt up to this turn (chat.Layout.Session): the system
// turn and the conversation's earlier turns, which the next message's prompt
// starts with, so that the first reply after a restart prefills little more
// than the last turn and the new message. Writing it costs flash (the whole
// state each time: about 28 KiB a token for a 1.5B Qwen2.5), so the client
// asks for a save only
//
//   - when it does not know what the file holds (its first prompt),
//   - when the conversation the file holds went on (the new part starts
//     with the saved one): at most one write per turn of the conversation
//     being had, the one a restart would continue,
//   - otherwise (another session, another system turn) when the saved one
//     is older than replace: two people talking in turns do not rewrite it
//     at every message. Their prompts still share the saved system turn.
//
// The runner itself replaces whenever asked (wire.PrefixCache.ReplaceAfter
// 0) and never rewrites a state it holds already.
type savedPrefix struct {
	replace time.Duration

	mu   sync.Mutex
	text string    // the prompt text whose state the runner last saved for this client
	at   time.Time // when
}

// fixed is how many bytes at the start of prompt the runner should save the
// state of (wire.Generate.Prefix): l.Session, or 0 for no save.
func (p *savedPrefix) fixed(prompt string, l chat.Layout, now time.Time) int {
	if l.System <= 0 || l.Session < l.System || l.Session >= len(prompt) {
		return 0
	}
	head := prompt[:l.Session]
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.text == "", strings.HasPrefix(head, p.text), now.Sub(p.at) >= p.replace:
		return l.Session
	}
	return 0
}

// saved records that the runner saved the state of text.
func (p *savedPrefix) saved(text string, now time.Time) {
	p.mu.Lock()
	p.text, p.at = text, now
	p.mu.Unlock()
}
