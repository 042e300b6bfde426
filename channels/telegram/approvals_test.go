package telegram

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/policy"
)

// approvalAgent asks for approval of its message text, through the message's own
// asker as the agent does, and reports the decision.
func approvalAgent() channels.Agent {
	return agentFunc(func(ctx context.Context, m channels.Message) (string, error) {
		if m.Asker == nil {
			return "", errors.New("the message has no asker")
		}
		d, err := m.Asker.Ask(ctx, policy.Pending{Call: "open the garage door (" + m.Text + ")"})
		if err != nil {
			return "", err
		}
		return "decision: " + d.String(), nil
	})
}

// buttons returns the callback data of the approval message's two buttons.
func buttons(t *testing.T, c telegramtest.Call) (yes, no string) {
	t.Helper()
	kb, _ := c.Params["reply_markup"].(map[string]any)
	rows, _ := kb["inline_keyboard"].([]any)
	if len(rows) != 1 {
		t.Fatalf("no inline keyboard in %s", c.Raw)
	}
	row := rows[0].([]any)
	yes = row[0].(map[string]any)["callback_data"].(string)
	no = row[1].(map[string]any)["callback_data"].(string)
	if len(yes) > 64 || len(no) > 64 {
		t.Errorf("callback data longer than Telegram's 64 bytes")
	}
	return yes, no
}

// approvalMessage waits for the n-th message with buttons.
func approvalMessage(t *testing.T, h *harness, n int) telegramtest.Call {
	t.Helper()
	var found []telegramtest.Call
	h.srv.Wait(t, 5*time.Second, "an approval request", func() bool {
		found = found[:0]
		for _, c := range h.srv.Calls("sendMessage") {
			if c.Params["reply_markup"] != nil && c.Status == 200 {
				found = append(found, c)
			}
		}
		return len(found) >= n
	})
	return found[n-1]
}

func TestApprovals(t *testing.T) {
	h := newHarness(t, nil, "")
	cfg := h.config(withAgent(approvalAgent()))
	cfg.AllowChats = []int64{group.ID}
	h.start(cfg)
	member := telegramtest.User{ID: 500, FirstName: "Gina", Username: "gina"}

	// The asker approves.
	h.srv.Text(owner, nil, "please")
	ask := approvalMessage(t, h, 1)
	if !strings.Contains(ask.Str("text"), "open the garage door (please)") {
		t.Errorf("approval text = %q", ask.Str("text"))
	}
	yes, no := buttons(t, ask)
	if yes == no || !strings.HasPrefix(yes, "ap:") {
		t.Errorf("buttons %q %q", yes, no)
	}
	h.srv.Press(owner, owner.ID, 2, yes)
	if got := plainOf(t, h.reply(owner.ID, 2)); got != "decision: approved" {
		t.Errorf("reply = %q", got)
	}
	h.srv.Wait(t, 5*time.Second, "the decision shown", func() bool {
		return h.srv.Count("answerCallbackQuery") == 1 && h.srv.Count("editMessageText") == 1
	})
	if e := h.srv.Calls("editMessageText")[0]; !strings.Contains(e.Str("text"), "✅ Approved by @olga") || e.Params["reply_markup"] != nil {
		t.Errorf("edit = %s", e.Raw)
	}
	if a := h.srv.Calls("answerCallbackQuery")[0]; a.Str("text") != "✅ Approved" {
		t.Errorf("answer = %s", a.Raw)
	}

	// In a group, another member may not decide; the owner may.
	h.srv.Push(map[string]any{"message": telegramtest.Mention(h.srv.Message(member, &group, "@clawedge_bot open"))})
	ask = approvalMessage(t, h, 2)
	if ask.Int("chat_id") != group.ID {
		t.Fatalf("approval in chat %d", ask.Int("chat_id"))
	}
	yes, no = buttons(t, ask)
	intruder := telegramtest.User{ID: 501, FirstName: "Ivan"}
	h.srv.Press(intruder, group.ID, 9, yes)
	h.srv.Wait(t, 5*time.Second, "the intruder answered", func() bool { return h.srv.Count("answerCallbackQuery") == 2 })
	if a := h.srv.Calls("answerCallbackQuery")[1]; !strings.Contains(a.Str("text"), "Only the person who asked") || a.Params["show_alert"] != true {
		t.Errorf("intruder answer = %s", a.Raw)
	}
	h.srv.Press(owner, group.ID, 9, no)
	if got := plainOf(t, h.reply(group.ID, 2)); got != "decision: denied" {
		t.Errorf("group reply = %q", got)
	}
	// A second press on a decided request changes nothing.
	h.srv.Press(member, group.ID, 9, yes)
	h.srv.Wait(t, 5*time.Second, "the late press answered", func() bool { return h.srv.Count("answerCallbackQuery") == 4 })
	if a := h.srv.Calls("answerCallbackQuery")[3]; !strings.Contains(a.Str("text"), "expired or was already decided") {
		t.Errorf("late press = %s", a.Raw)
	}
	// Junk callback data is answered, not acted on.
	h.srv.Press(owner, owner.ID, 1, "zz")
	h.srv.Wait(t, 5*time.Second, "junk answered", func() bool { return h.srv.Count("answerCallbackQuery") == 5 })
}

func TestApprovalExpires(t *testing.T) {
	h := newHarness(t, nil, "")
	cfg := h.config(withAgent(approvalAgent()))
	cfg.ApprovalTimeout = 200 * time.Millisecond
	h.start(cfg)
	h.srv.Text(owner, nil, "now")
	ask := approvalMessage(t, h, 1)
	if got := plainOf(t, h.reply(owner.ID, 2)); got != "decision: expired" {
		t.Errorf("reply = %q", got)
	}
	h.srv.Wait(t, 5*time.Second, "the expiry shown", func() bool { return h.srv.Count("editMessageText") == 1 })
	if e := h.srv.Calls("editMessageText")[0]; !strings.Contains(e.Str("text"), "Expired") || e.Params["reply_markup"] != nil {
		t.Errorf("edit = %s", e.Raw)
	}
	// Pressing after expiry.
	yes, _ := buttons(t, ask)
	h.srv.Press(owner, owner.ID, 1, yes)
	h.srv.Wait(t, 5*time.Second, "late press answered", func() bool { return h.srv.Count("answerCallbackQuery") == 1 })
	if a := h.srv.Calls("answerCallbackQuery")[0]; !strings.Contains(a.Str("text"), "expired") {
		t.Errorf("answer = %s", a.Raw)
	}
}

func TestApproveNeedsAnOrigin(t *testing.T) {
	h := newHarness(t, nil, "")
	ch, err := New(h.config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (asker{c: ch}).Ask(context.Background(), policy.Pending{Call: "x"}); !errors.Is(err, ErrNoOrigin) {
		t.Errorf("Approve without origin = %v", err)
	}
	var _ policy.Asker = asker{}
}
