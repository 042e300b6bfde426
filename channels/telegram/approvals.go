package telegram

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

// ApprovalRequest is a question with buttons in one chat.
type ApprovalRequest struct {
	ChatID      int64
	UserID      int64 // who asked: they, or an owner, may decide
	ReplyTo     int64 // the message it is about, in a group
	Description string
	Timeout     time.Duration // 0: the channel's ApprovalTimeout
	// PendingID, for a call waiting in the call path's approvals, is its id:
	// who may press is then the authorizer's rule (Approver.MayDecide), not
	// this channel's.
	PendingID string
}

// ErrNoOrigin is returned by an asker that has no Telegram message to ask about.
var ErrNoOrigin = errors.New("telegram: no Telegram message is being handled, so there is nobody to ask")

// callback data: "ap:<id>:y" or "ap:<id>:n". The id is random, so a button under an old
// message can never decide a new request; 64 bytes is Telegram's limit for the data.
const approvalPrefix = "ap:"

type approval struct {
	req    ApprovalRequest
	chatID int64
	msgID  int64
	text   string // the message as sent, for editing
	done   chan policy.Decision
}

type approvals struct {
	c       *Channel
	mu      sync.Mutex
	pending map[string]*approval
}

func newApprovals(c *Channel) *approvals {
	return &approvals{c: c, pending: map[string]*approval{}}
}

// asker is the agent's Asker for one message: it asks the person who sent it, in its
// chat (under the message, in a group), with Approve and Deny buttons. handle gives
// one to each message it passes on.
type asker struct {
	c *Channel
	o Origin
}

// Ask implements policy.Asker. It returns Expired when nobody decided in time, and an
// error when it could not ask at all (no origin, Telegram unreachable until ctx ended).
func (a asker) Ask(ctx context.Context, p policy.Pending) (policy.Decision, error) {
	if a.c == nil || a.o.ChatID == 0 {
		return policy.Rejected, ErrNoOrigin
	}
	req := ApprovalRequest{ChatID: a.o.ChatID, UserID: a.o.UserID, Description: p.Call, PendingID: p.ID}
	if a.o.Group {
		req.ReplyTo = a.o.MessageID
	}
	return a.c.Ask(ctx, req)
}

// Ask sends req with Approve and Deny buttons and waits for a press by the person who
// asked or an owner, for the timeout, or for ctx. Whatever ends it, the message is
// edited to say so and its buttons are removed.
func (c *Channel) Ask(ctx context.Context, req ApprovalRequest) (policy.Decision, error) {
	a := c.approvals
	if req.Timeout <= 0 {
		req.Timeout = c.cfg.ApprovalTimeout
	}
	var rb [8]byte
	rand.Read(rb[:])
	id := hex.EncodeToString(rb[:])
	text := "Approval needed:\n" + req.Description
	kb := &InlineKeyboard{InlineKeyboard: [][]InlineButton{{
		{Text: "✅ Approve", CallbackData: approvalPrefix + id + ":y"},
		{Text: "❌ Deny", CallbackData: approvalPrefix + id + ":n"},
	}}}
	ap := &approval{req: req, chatID: req.ChatID, text: text, done: make(chan policy.Decision, 1)}
	// Registered before sending, so that a press cannot arrive before we listen.
	a.mu.Lock()
	a.pending[id] = ap
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.pending, id)
		a.mu.Unlock()
	}()

	sreq := SendMessage{ChatID: req.ChatID, Text: text, ReplyMarkup: kb}
	if req.ReplyTo != 0 {
		sreq.ReplyParameters = &ReplyParameters{MessageID: req.ReplyTo, AllowSendingWithoutReply: true}
	}
	msg, err := c.sendOne(ctx, sreq, text)
	if err != nil {
		return policy.Rejected, fmt.Errorf("telegram: asking for approval: %w", err)
	}
	a.mu.Lock()
	ap.msgID = msg.MessageID
	a.mu.Unlock()

	t := time.NewTimer(req.Timeout)
	defer t.Stop()
	select {
	case d := <-ap.done:
		return d, nil
	case <-t.C:
	case <-ctx.Done():
	}
	// Whoever removes it from pending decides: a press racing the timer either won
	// (and its decision is in done) or finds nothing.
	a.mu.Lock()
	_, still := a.pending[id]
	delete(a.pending, id)
	a.mu.Unlock()
	if !still {
		return <-ap.done, nil
	}
	why := fmt.Sprintf("⌛ Expired: no answer within %s. Not done.", req.Timeout.Round(time.Second))
	if ctx.Err() != nil {
		why = "⌛ Cancelled. Not done."
	}
	ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := c.client.EditMessageText(ectx, EditMessageText{ChatID: ap.chatID, MessageID: ap.msgID, Text: text + "\n\n" + why}); err != nil {
		c.log.Warn("telegram: editing an expired approval", "err", err)
	}
	if ctx.Err() != nil {
		return policy.Expired, ctx.Err()
	}
	return policy.Expired, nil
}

// handle answers a button press (called from the poller for each callback_query).
func (a *approvals) handle(ctx context.Context, cq *CallbackQuery) {
	c := a.c
	answer := func(text string, alert bool) {
		if err := c.client.AnswerCallbackQuery(ctx, AnswerCallbackQuery{CallbackQueryID: cq.ID, Text: text, ShowAlert: alert}); err != nil && ctx.Err() == nil {
			c.log.Debug("telegram: answering a button press", "err", err)
		}
	}
	rest, ok := strings.CutPrefix(cq.Data, approvalPrefix)
	id, choice, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || (choice != "y" && choice != "n") {
		answer("", false)
		return
	}
	// Presses from people who may not talk to the bot at all are not even answered
	// with a reason; the spinner just stops.
	a.mu.Lock()
	ap, live := a.pending[id]
	if live {
		if err := c.mayPress(ap.req, cq.From.ID); err != nil {
			a.mu.Unlock()
			answer(err.Error(), true)
			return
		}
	}
	if live {
		delete(a.pending, id)
	}
	msgID := int64(0)
	if live {
		msgID = ap.msgID
	}
	a.mu.Unlock()
	if !live {
		answer("This request has expired or was already decided.", false)
		if cq.Message != nil && c.access.userAllowed(cq.From.ID) {
			// A button left over (from before a restart): take it away.
			c.client.EditMessageText(ctx, EditMessageText{ChatID: cq.Message.Chat.ID, MessageID: cq.Message.MessageID,
				Text: cq.Message.Text + "\n\n⌛ Expired. Not done."})
		}
		return
	}
	d := policy.Rejected
	if choice == "y" {
		d = policy.Approved
	}
	ap.done <- d
	name := cq.From.FirstName
	if cq.From.Username != "" {
		name = "@" + cq.From.Username
	}
	verdict := "❌ Denied by " + name
	if d == policy.Approved {
		verdict = "✅ Approved by " + name
	}
	answer(strings.SplitN(verdict, " by ", 2)[0], false)
	if msgID == 0 && cq.Message != nil {
		msgID = cq.Message.MessageID
	}
	if err := c.client.EditMessageText(ctx, EditMessageText{ChatID: ap.chatID, MessageID: msgID, Text: ap.text + "\n\n" + verdict}); err != nil && ctx.Err() == nil {
		c.log.Warn("telegram: editing a decided approval", "err", err)
	}
}

// mayPress says whether Telegram user from may decide req. A call of the call
// path is the authorizer's to say (the one rule of who approves what); any
// other question only the person who asked, or an owner, may answer.
func (c *Channel) mayPress(req ApprovalRequest, from int64) error {
	if d := c.cfg.Dispatcher; req.PendingID != "" && d != nil && d.Approvals != nil {
		appr := d.Approvals
		by := tools.Caller{Channel: ChannelName, User: fmt.Sprintf("telegram:%d", from), Actor: tools.Person}
		if err := appr.MayDecide(req.PendingID, by); err != nil && !errors.Is(err, policy.ErrNoApproval) {
			return err
		}
		return nil
	}
	if from != req.UserID && !c.access.owner(from) {
		return errors.New("Only the person who asked, or an owner, can decide this.")
	}
	return nil
}
