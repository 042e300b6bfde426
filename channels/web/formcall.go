package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/clawedge/clawedge/channels"
)

// formCall runs tool with args for the form's browser on the one call path
// (web:NAME with its role): a page's action. The reply may wait for an
// approval the policy asks for, so it gets callLimit to be written.
func (s *Server) formCall(w http.ResponseWriter, r *http.Request, tool string, args map[string]any) channels.CallResult {
	raw, err := json.Marshal(args)
	if err != nil {
		return channels.CallResult{Text: err.Error(), Failed: true}
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(callLimit))
	se := sessionOf(r)
	return channels.ToolCall(r.Context(), s.Runner, Caller(se.Name, se.Role), tool, raw)
}

// callStatus is the HTTP status of a form's call: 403 refused by the
// authorizer, 422 failed, 200 done.
func callStatus(res channels.CallResult) int {
	switch {
	case res.Refused:
		return http.StatusForbidden
	case res.Failed:
		return http.StatusUnprocessableEntity
	}
	return http.StatusOK
}
