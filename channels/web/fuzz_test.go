package web

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// FuzzFormToken feeds plain form posts to csrfOf, the one reader of a
// form's fields the guard has: it never panics, and takes a token from a
// body only when the body is a plain form (another type is never parsed).
func FuzzFormToken(f *testing.F) {
	f.Add("application/x-www-form-urlencoded", []byte("csrf=abc&text=hi"))
	f.Add("application/x-www-form-urlencoded; charset=utf-8", []byte("text=%zz&csrf=1"))
	f.Add("multipart/form-data; boundary=x", []byte("--x\r\ncsrf=abc"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req := httptest.NewRequest("POST", "/chat", bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Body = http.MaxBytesReader(httptest.NewRecorder(), req.Body, maxBody)
		got := csrfOf(req)
		if got != "" && !strings.HasPrefix(strings.TrimSpace(contentType), "application/x-www-form-urlencoded") {
			t.Fatalf("a token %q from a body of type %q", got, contentType)
		}
	})
}

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

// FuzzMultipartToken feeds multipart form posts (the skill upload's) to
// multipartCSRF: it never panics, takes a token only from a first part
// named csrf, bounded, and hands on the rest of the form only with one.
func FuzzMultipartToken(f *testing.F) {
	f.Add("multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\nabc\r\n--x\r\nContent-Disposition: form-data; name=\"archive\"; filename=\"a.tar.gz\"\r\n\r\nDATA\r\n--x--\r\n"))
	f.Add("multipart/form-data; boundary=x", []byte("--x\r\nContent-Disposition: form-data; name=\"archive\"\r\n\r\nabc\r\n--x--\r\n"))
	f.Add("multipart/form-data", []byte("--x\r\n"))
	f.Add("text/plain", []byte("csrf=abc"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		req := httptest.NewRequest("POST", skillsUploadPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		got, rest := multipartCSRF(req)
		if (got == "") != (rest == nil) && got != "" {
			t.Fatalf("a token %q without the rest of the form", got)
		}
		if len(got) > 128 {
			t.Fatalf("a token of %d bytes", len(got))
		}
		if got != "" && !strings.HasPrefix(strings.TrimSpace(contentType), "multipart/form-data") {
			t.Fatalf("a token %q from a body of type %q", got, contentType)
		}
	})
}
