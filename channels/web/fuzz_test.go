package web

import (
	"bytes"
	"net/http/httptest"
	"net/url"
	"testing"
)

// FuzzRequestInput feeds outside input to the door's own parsers: the audit
// query and the JSON bodies of /api/session, /api/call and the approvals.
// None may panic; what they accept stays within the bounds.
func FuzzRequestInput(f *testing.F) {
	f.Add("caller=web:phone&tool=gpio/write&n=5&before=10", []byte(`{"code":"12345678"}`))
	f.Add("n=0", []byte(`{"tool":"gpio/write","args":{"pin":"led","value":1}}`))
	f.Add("n=%zz&before=-1", []byte(`{"approve":true} {}`))
	f.Add("tool=%40x%7B", []byte(`{"code":12}`))
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		if q, err := url.ParseQuery(query); err == nil {
			if aq, err := parseAuditQuery(q); err == nil && (aq.N < 1 || aq.N > auditMax || len(aq.Caller) > 200) {
				t.Fatalf("accepted %+v", aq)
			}
		}
		toolOf(string(body))
		var s struct {
			Code string `json:"code"`
		}
		decodeBody(httptest.NewRequest("POST", "/", bytes.NewReader(body)), &s)
		var c struct {
			Tool string         `json:"tool"`
			Args map[string]any `json:"args"`
		}
		decodeBody(httptest.NewRequest("POST", "/", bytes.NewReader(body)), &c)
		var a struct {
			Approve *bool `json:"approve"`
		}
		decodeBody(httptest.NewRequest("POST", "/", bytes.NewReader(body)), &a)
	})
}
