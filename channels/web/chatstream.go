package web

import (
	"context"
	"net/http"
	"time"

	"github.com/clawedge/clawedge/policy"
)

// A chat answer as server-sent events, on the reply to the POST itself (no
// second request to tie to the first). The events, each one JSON line:
//
//	event: text      "a piece of the answer"
//	event: approval  {"id", "call", "deadline", "may"}: a call of this turn waits for a person
//	event: settled   {"id", "outcome"}: that request ended ("decided" or "expired")
//	event: reply     {"reply", "failed", "streamed"}: the whole answer; the last event
//
// The pieces come from the Dispatcher's RespondStream, the one streaming path
// the console and the control socket use; the approvals from the agent's
// Asker, the hook Telegram's buttons use. Answering one is not done here:
// the buttons post to /api/approvals/ID, the one decision path
// (policy.Authorizer.Decide), so the chat adds no second way to decide.

// approvalEvent is a call of this chat's turn waiting for a person.
type approvalEvent struct {
	ID       string    `json:"id"`
	Call     string    `json:"call"`
	Deadline time.Time `json:"deadline"`
	// May says whether this browser may answer it (the Authorizer's
	// MayDecide for web:<name>, and an owner's browser): the buttons are
	// shown only then.
	May bool `json:"may"`
}

type settledEvent struct {
	ID      string `json:"id"`
	Outcome string `json:"outcome"` // "decided" (here or elsewhere) or "expired"
}

type replyEvent struct {
	Reply    string `json:"reply"`
	Failed   bool   `json:"failed"`
	Streamed bool   `json:"streamed"` // the text events already carried Reply
}

func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, se session, text string) {
	events := startEvents(w)
	defer events.close()
	asker := &chatAsker{s: s, se: se, events: events}
	resp := s.chatTurn(r.Context(), se, text, func(piece string) { events.send("text", piece) }, asker)
	events.send("reply", replyEvent{Reply: resp.Text, Failed: resp.Failed, Streamed: resp.Streamed})
}

// chatAsker is the agent's policy.Asker for one chat turn: it shows the
// request in the chat and waits. It never decides: the decision comes back
// through the authorizer (the buttons' POST /api/approvals/ID, or anyone
// else allowed), which ends the wait for everyone.
type chatAsker struct {
	s      *Server
	se     session
	events *eventStream
}

// Ask implements policy.Asker. It returns Expired when ctx ends: the
// authorizer takes only Approved or Rejected from an Asker, so this one
// stays out of the race it does not take part in.
func (a *chatAsker) Ask(ctx context.Context, p policy.Pending) (policy.Decision, error) {
	may := a.s.Auth != nil && a.s.Auth.MayDecide(p.ID, Caller(a.se.Name, a.se.Role)) == nil
	a.events.send("approval", approvalEvent{ID: p.ID, Call: p.Call, Deadline: p.Deadline, May: may})
	<-ctx.Done()
	outcome := "decided"
	if !time.Now().Before(p.Deadline) {
		outcome = "expired"
	}
	a.events.send("settled", settledEvent{ID: p.ID, Outcome: outcome})
	return policy.Expired, nil
}
