package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
)

// The JSON API (docs/web.md). Errors are {"error": "..."} with a status
// that says which guard or check refused.

func apiError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// decodeBody reads one JSON object of at most maxBody bytes into v.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the body is not the JSON object expected: %v", err)
	}
	if dec.More() {
		return errors.New("the body has more than one JSON value")
	}
	return nil
}

// sessionReply answers a pairing: the CSRF token the pages and scripts send back.
type sessionReply struct {
	CSRF string `json:"csrf"`
	Name string `json:"name"`
	Role Role   `json:"role"`
}

// apiSession trades a pairing code for a session. The cookie is always a new
// token, whatever the browser sent: a session cannot be fixed beforehand.
func (s *Server) apiSession(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Code string `json:"code"`
	}
	if err := decodeBody(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	rep, status, err := s.redeem(w, req.Code)
	if err != nil {
		apiError(w, status, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, rep)
}

// redeem pairs with code and sets the cookie; the status is for an error.
func (s *Server) redeem(w http.ResponseWriter, code string) (sessionReply, int, error) {
	token, csrf, d, err := s.Sessions.Redeem(strings.TrimSpace(code))
	var cool *CooldownError
	switch {
	case errors.As(err, &cool):
		w.Header().Set("Retry-After", strconv.Itoa(int(time.Until(cool.Until).Seconds())+1))
		return sessionReply{}, http.StatusTooManyRequests, err
	case errors.Is(err, ErrWrongCode):
		return sessionReply{}, http.StatusForbidden, err
	case err != nil:
		return sessionReply{}, http.StatusServiceUnavailable, err
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true,
		Secure: s.TLS, SameSite: http.SameSiteStrictMode, MaxAge: 400 * 24 * 3600})
	s.log().Info("web: a browser paired", "name", d.Name, "role", d.Role)
	return sessionReply{CSRF: csrf, Name: d.Name, Role: d.Role}, 0, nil
}

func (s *Server) apiPins(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Facts.Pins())
}

func (s *Server) apiAutomations(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Facts.Automations())
}

// apiCall runs one tool for the session's device on the one call path,
// its role with it: a viewer's call is refused there, by the policy's role
// layer, and audited like any refusal.
func (s *Server) apiCall(w http.ResponseWriter, r *http.Request) {
	se := sessionOf(r)
	var req struct {
		Tool string          `json:"tool"`
		Args json.RawMessage `json:"args"`
	}
	if err := decodeBody(r, &req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if len(req.Args) == 0 || string(req.Args) == "null" {
		req.Args = json.RawMessage("{}")
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(callLimit))
	res := channels.ToolCall(r.Context(), s.Runner, Caller(se.Name, se.Role), req.Tool, req.Args)
	status := http.StatusOK
	switch {
	case res.Refused:
		status = http.StatusForbidden
	case res.Failed:
		status = http.StatusUnprocessableEntity
	}
	writeJSON(w, status, res)
}

// auditRow is one audit entry as the API gives it.
type auditRow struct {
	ID      uint64    `json:"id"`
	Time    time.Time `json:"time"`
	Who     string    `json:"who"`
	Channel string    `json:"channel"`
	Command string    `json:"command"`
	Done    bool      `json:"done"`
	OK      bool      `json:"ok"`
	Detail  string    `json:"detail,omitempty"`
}

type auditPage struct {
	Entries []auditRow `json:"entries"` // newest first
	Before  uint64     `json:"before"`  // the next page: ?before=this; 0: none
}

// Paging bounds: a page, and how many entries one request reads at most
// while filtering, so a filter matching nothing cannot walk the whole store.
const (
	auditMax  = 100
	auditScan = 2000
	auditRead = 200
)

// auditQuery is a parsed GET /api/audit (and /audit page) query.
type auditQuery struct {
	Before uint64
	N      int
	Caller string // the principal, exactly ("web:phone")
	Tool   string // the tool, exactly ("gpio/write")
}

// parseAuditQuery reads ?before=&n=&caller=&tool=; bad values are errors.
func parseAuditQuery(q map[string][]string) (auditQuery, error) {
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	aq := auditQuery{N: 20, Caller: get("caller"), Tool: get("tool")}
	if v := get("before"); v != "" {
		b, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return aq, fmt.Errorf("before=%q is not an entry id", v)
		}
		aq.Before = b
	}
	if v := get("n"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > auditMax {
			return aq, fmt.Errorf("n=%q: want 1 to %d", v, auditMax)
		}
		aq.N = n
	}
	if len(aq.Caller) > 200 || len(aq.Tool) > 200 {
		return aq, errors.New("caller and tool are at most 200 bytes")
	}
	return aq, nil
}

// toolOf is the tool an audited command names: "@gpio/write{...}" -> "gpio/write".
func toolOf(command string) string {
	c := strings.TrimPrefix(command, "@")
	if i := strings.IndexAny(c, "{ "); i >= 0 {
		c = c[:i]
	}
	return c
}

func (s *Server) auditRows(q auditQuery) (auditPage, error) {
	var out auditPage
	before, scanned := q.Before, 0
	for len(out.Entries) < q.N && scanned < auditScan {
		entries, err := s.Facts.Audit(before, auditRead)
		if err != nil {
			return out, err
		}
		if len(entries) == 0 {
			return out, nil
		}
		scanned += len(entries)
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			before = e.ID
			if (q.Caller != "" && e.Who != q.Caller) || (q.Tool != "" && toolOf(e.Command) != q.Tool) {
				continue
			}
			out.Entries = append(out.Entries, row(e))
			if len(out.Entries) == q.N {
				break
			}
		}
		if before <= 1 {
			return out, nil
		}
	}
	out.Before = before
	return out, nil
}

func row(e store.AuditEntry) auditRow {
	return auditRow{ID: e.ID, Time: e.Time, Who: e.Who, Channel: e.Channel, Command: e.Command, Done: e.Done, OK: e.OK, Detail: e.Detail}
}

func (s *Server) apiAudit(w http.ResponseWriter, r *http.Request) {
	q, err := parseAuditQuery(r.URL.Query())
	if err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	p, err := s.auditRows(q)
	if err != nil {
		apiError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, p)
}

func (s *Server) approvals() []policy.Pending {
	if s.Auth == nil {
		return []policy.Pending{}
	}
	return append([]policy.Pending{}, s.Auth.List()...)
}

func (s *Server) apiApprovals(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.approvals())
}

// decide answers approval id for se: the authorizer decides whether
// web:<name>, with its role, may decide this one (an owner's browser, and
// then policy.owners or a request its own call made). The status is for an
// error.
func (s *Server) decide(se session, id string, approve bool) (policy.Pending, int, error) {
	if s.Auth == nil {
		return policy.Pending{}, http.StatusNotFound, policy.ErrNoApproval
	}
	p, err := s.Auth.Decide(id, approve, Caller(se.Name, se.Role))
	if err != nil {
		status := http.StatusForbidden
		if errors.Is(err, policy.ErrNoApproval) {
			status = http.StatusNotFound
		}
		return p, status, err
	}
	return p, http.StatusOK, nil
}

// apiDecide answers an approval: {"approve": true|false}.
func (s *Server) apiDecide(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Approve *bool `json:"approve"`
	}
	if err := decodeBody(r, &req); err != nil || req.Approve == nil {
		apiError(w, http.StatusBadRequest, `the body must be {"approve": true} or {"approve": false}`)
		return
	}
	p, status, err := s.decide(sessionOf(r), r.PathValue("id"), *req.Approve)
	if err != nil {
		apiError(w, status, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, p)
}

// approvalsForm answers an approval without JavaScript (the approvals page's
// plain form: approve=true|false), then shows the page again.
func (s *Server) approvalsForm(w http.ResponseWriter, r *http.Request) {
	approve := r.PostFormValue("approve")
	if approve != "true" && approve != "false" {
		s.renderPage(w, r, "approvals", http.StatusBadRequest, "approve must be true or false")
		return
	}
	if _, status, err := s.decide(sessionOf(r), r.PathValue("id"), approve == "true"); err != nil {
		s.renderPage(w, r, "approvals", status, err.Error())
		return
	}
	http.Redirect(w, r, "/approvals", http.StatusSeeOther)
}

// apiEvents streams the pins (event "pins", the whole list) whenever one
// changes, and first at once; with ?sensors=1 the sensors' last readings
// too (event "sensors"), at once and after each sample. It reads the board's levels a few times a
// second: cheap, and it sees a change whoever made it.
func (s *Server) apiEvents(w http.ResponseWriter, r *http.Request) {
	events := s.openStream(w, r)
	if events == nil {
		return
	}
	defer events.close()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var last []Pin
	sensors := s.sensorEvents(r) // page_sensors.go
	for sent := false; ; sent = true {
		if pins := s.Facts.Pins(); !sent || !slices.Equal(pins, last) {
			last = pins
			if events.send("pins", pins) != nil {
				return
			}
		}
		if sensors.due(!sent) && events.send("sensors", s.Sensors.Quantities()) != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-events.end.C:
			return
		case <-tick.C:
		case <-sensors.next:
		}
		if events.revoked(s) {
			return // the stream ends with the session
		}
	}
}

// pollEvery is how often an event stream reads the pins.
const pollEvery = 200 * time.Millisecond
