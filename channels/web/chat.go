package web

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels"
)

// The chat hands one line to the Dispatcher as web:<name>'s message, as a
// console line is: a command is the person's own call, free text goes to
// the agent (the model acting for web:<name>), approval words to the
// authorizer. Three ways in, one turn (chatTurn):
//
//   - POST /api/chat with Accept: text/event-stream (the page's script): the
//     answer streamed as it is produced, and the calls that ask, with buttons
//     (chatstream.go);
//   - POST /api/chat otherwise (a script): the whole answer as JSON;
//   - POST /chat, a plain form (no JavaScript): the chat page again, with the
//     line and the whole answer.

const (
	// maxChat is the longest message a browser may send.
	maxChat = 4 << 10
	// maxChats is how many chat turns may be running at once: each may wait
	// minutes for an approval, holding a connection and a goroutine;
	// maxChatsEach of them of one browser, so that one cannot take them all.
	maxChats     = 8
	maxChatsEach = 2
)

// chatRefusal says why se may not send text (status 0: it may): a viewer
// sends nothing. An approval word goes on, with the browser's role, to the
// authorizer, which refuses it from a browser that is not an owner's.
func (s *Server) chatRefusal(se session, text string) (int, string) {
	switch {
	case s.Chat == nil:
		return http.StatusNotFound, "no chat on this dashboard"
	case len(text) > maxChat:
		return http.StatusBadRequest, "the message is longer than 4 KiB"
	case strings.TrimSpace(text) == "":
		return http.StatusBadRequest, "the message is empty"
	case se.Role == Viewer:
		return http.StatusForbidden, "web:" + se.Name + " is a viewer: it may not send messages"
	}
	return 0, ""
}

// chatTurn answers text for se. emit, when not nil and the Dispatcher can
// stream, gets the answer piece by piece; asker, when not nil, is told of
// the agent's calls that wait for a person.
//
// A turn has callLimit at most, streamed or not: an answer that takes longer
// (a model stalling between pieces, each of which would reset a write
// deadline) is cancelled, as a call waiting that long for an approval is.
func (s *Server) chatTurn(ctx context.Context, se session, text string, emit func(string), asker *chatAsker) channels.Response {
	ctx, cancel := context.WithTimeout(ctx, callLimit)
	defer cancel()
	msg := channels.Message{Channel: Channel, User: Caller(se.Name, se.Role).User, Role: se.Role, Text: text}
	if asker != nil {
		msg.Asker = asker
	}
	if sh, ok := s.Chat.(channels.StreamHandler); ok && emit != nil {
		return sh.RespondStream(ctx, msg, emit)
	}
	return s.Chat.Respond(ctx, msg)
}

// takeChat counts one more running chat turn of se and returns what ends
// it; nil: too many already, in all or of this browser.
func (s *Server) takeChat(se session) func() {
	if !s.chatsOf.take(se.key, maxChatsEach) {
		return nil
	}
	if s.chats.Add(1) > maxChats {
		s.chats.Add(-1)
		s.chatsOf.give(se.key)
		return nil
	}
	return func() { s.chats.Add(-1); s.chatsOf.give(se.key) }
}

func (s *Server) apiChat(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	var req struct {
		Text string `json:"text"`
	}
	if err := decodeBody(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if status, why := s.chatRefusal(se, req.Text); status != 0 {
		apiError(w, status, why)
		return
	}
	done := s.takeChat(se)
	if done == nil {
		apiError(w, http.StatusServiceUnavailable, "too many chat turns running; try again when one has answered")
		return
	}
	defer done()
	if wantsEvents(r) {
		s.streamChat(w, r, se, req.Text) // chatstream.go
		return
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(callLimit))
	resp := s.chatTurn(r.Context(), se, req.Text, nil, nil)
	status := http.StatusOK
	if resp.Failed {
		status = http.StatusUnprocessableEntity
	}
	writeJSON(w, status, map[string]any{"reply": resp.Text, "failed": resp.Failed})
}

// wantsEvents reports whether the client asked for the answer as events.
func wantsEvents(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

// chatForm is the chat without JavaScript: the form's line, answered whole
// on the chat page (the CSRF token comes in the form, guard.go).
func (s *Server) chatForm(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	text := r.PostFormValue("text")
	if status, why := s.chatRefusal(se, text); status != 0 {
		writeHTML(w, status, s.chatHTML(se, text, why, true))
		return
	}
	done := s.takeChat(se)
	if done == nil {
		writeHTML(w, http.StatusServiceUnavailable, s.chatHTML(se, text, "too many chat turns running; try again when one has answered", true))
		return
	}
	defer done()
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(callLimit))
	resp := s.chatTurn(r.Context(), se, text, nil, nil)
	writeHTML(w, http.StatusOK, s.chatHTML(se, text, resp.Text, resp.Failed))
}

func (s *Server) chatPage(w http.ResponseWriter, r *http.Request) {
	writeHTML(w, http.StatusOK, s.chatHTML(sessionOf(r), "", "", false))
}

// chatHTML is the chat page showing one exchange (none when text is "").
func (s *Server) chatHTML(se session, text, reply string, failed bool) string {
	var body htmlPage
	body.WriteString("<h1>Chat</h1>\n")
	if s.Chat == nil || se.Role == Viewer {
		body.WriteString("<p>Chat needs an operator's or owner's browser.</p>\n")
	} else {
		body.WriteString(`<ol id="chatlog" aria-live="polite">`)
		if text != "" {
			class := "board"
			if failed {
				class = "board failed"
			}
			body.f(`<li class="me">%s</li><li class="%s">%s</li>`, text, class, reply)
		}
		body.f(`</ol>
<form id="chat" method="post" action="/chat"><input type="hidden" name="csrf" value="%s">
<label>Message <input name="text" maxlength="4096" required autocomplete="off" autofocus></label> <button>Send</button></form>
<p class="hint">Ask in words, or type a command such as <code>@gpio/read{pin="button"}</code>.</p>
`, se.CSRF)
	}
	var p htmlPage
	p.head("chat", se, "")
	p.WriteString(body.String())
	p.foot()
	return p.String()
}
