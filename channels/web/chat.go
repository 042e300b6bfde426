package web

import (
	"net/http"
	"time"

	"github.com/clawedge/clawedge/channels"
)

// maxChat is the longest message a browser may send.
const maxChat = 4 << 10

// apiChat hands one line to the Dispatcher as web:<name>'s message, as a
// console line is: a command is the person's own call, free text goes to
// the agent (the model acting for web:<name>), approval words to the
// authorizer. A viewer is refused before, and so is an approval word from
// a browser that is not an owner's (as POST /api/approvals/ID).
func (s *Server) apiChat(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	if s.Chat == nil {
		apiError(w, http.StatusNotFound, "no chat on this dashboard")
		return
	}
	var req struct {
		Text string `json:"text"`
	}
	if err := decodeBody(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	switch {
	case len(req.Text) > maxChat:
		apiError(w, http.StatusBadRequest, "the message is longer than 4 KiB")
		return
	case se.Role == Viewer:
		apiError(w, http.StatusForbidden, "web:"+se.Name+" is a viewer: it may not send messages")
		return
	case se.Role != Owner && channels.IsApproval(req.Text):
		apiError(w, http.StatusForbidden, "web:"+se.Name+" is not an owner's browser: it may not answer approvals")
		return
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(callLimit))
	resp := s.Chat.Respond(r.Context(), channels.Message{Channel: Channel, User: Caller(se.Name).User, Text: req.Text})
	status := http.StatusOK
	if resp.Failed {
		status = http.StatusUnprocessableEntity
	}
	writeJSON(w, status, map[string]any{"reply": resp.Text, "failed": resp.Failed})
}

func (s *Server) chatBody(p *htmlPage, se session) {
	p.WriteString("<h1>Chat</h1>\n")
	if s.Chat == nil || se.Role == Viewer {
		p.WriteString("<p>Chat needs an operator's or owner's browser.</p>\n")
		return
	}
	p.WriteString(`<ol id="chatlog" aria-live="polite"></ol>
<form id="chat"><label>Message <input name="text" maxlength="4096" required autocomplete="off"></label> <button>Send</button></form>
<p class="hint">Ask in words, or type a command such as <code>@gpio/read{pin="button"}</code>.</p>
`)
}
