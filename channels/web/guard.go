package web

import (
	"context"
	"crypto/subtle"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The guards every request passes, in this order, before any handler:
// the Host (no DNS rebinding: only the listen address, an IP literal or a
// configured name), the Origin when a browser sends one (only this very
// site), the session cookie, and for every request that changes anything
// the CSRF token in X-CSRF-Token (or a plain form's csrf field). A refused
// request never reaches the call path.

const (
	cookieName = "clawedge_session"
	csrfHeader = "X-CSRF-Token"
	csrfField  = "csrf" // the same token in a plain form
)

// hostAllowed reports whether a request's Host names this server: an IP
// literal (a rebinding page cannot make a browser send one for its own
// name), localhost, or one of names.
func hostAllowed(hostport string, names []string) bool {
	h := hostOnly(hostport)
	if h == "" {
		return false
	}
	if net.ParseIP(h) != nil || h == "localhost" {
		return true
	}
	return slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, h) })
}

// originAllowed reports whether a browser's Origin is this site: the same
// host and port as the Host it asked for, with the scheme being served.
func originAllowed(origin, host string, tls bool) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	return u.Scheme == scheme && strings.EqualFold(u.Host, host)
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

type ctxKey struct{}

// sessionOf is the request's session, set by the guard.
func sessionOf(r *http.Request) session {
	se, _ := r.Context().Value(ctxKey{}).(session)
	return se
}

// csrfOf is the CSRF token a request carries: the header (scripts, the
// pages' fetches), or for a plain form post (the pages without JavaScript)
// the form's csrf field. A form cannot set a header, and another site's
// form cannot know the token, which only this site's pages carry.
func csrfOf(r *http.Request) string {
	if h := r.Header.Get(csrfHeader); h != "" {
		return h
	}
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) == "application/x-www-form-urlencoded" {
		return r.PostFormValue(csrfField) // the body is bounded by maxBody (server.go)
	}
	return ""
}

type partsKey struct{}

// multipartCSRF reads the token of a multipart form post (a file upload
// without JavaScript): its first part must be the csrf field, so that the
// token is checked before a byte of the file is read. The rest of the form
// is handed on to the handler (partsOf).
func multipartCSRF(r *http.Request) (string, *multipart.Reader) {
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) != "multipart/form-data" {
		return "", nil
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return "", nil
	}
	p, err := mr.NextPart()
	if err != nil || p.FormName() != csrfField {
		return "", nil
	}
	tok, err := io.ReadAll(io.LimitReader(p, 128))
	if err != nil {
		return "", nil
	}
	return string(tok), mr
}

// partsOf is the rest of a multipart form post whose token the guard read.
func partsOf(r *http.Request) *multipart.Reader {
	mr, _ := r.Context().Value(partsKey{}).(*multipart.Reader)
	return mr
}

// guard wraps next: site checks for every request; authed: a session
// needed (pages redirect to /pair, the API answers 401); every method but
// GET and HEAD also needs the session's CSRF token.
func (s *Server) guard(next http.HandlerFunc, authed bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, s.Names) {
			http.Error(w, "this Host is not the dashboard's (web.names lists the names it answers to)", http.StatusMisdirectedRequest)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && !originAllowed(o, r.Host, s.TLS) {
			http.Error(w, "requests from another site are refused", http.StatusForbidden)
			return
		}
		if !authed {
			next(w, r)
			return
		}
		c, _ := r.Cookie(cookieName)
		var se session
		ok := false
		if c != nil {
			se, ok = s.Sessions.lookup(c.Value)
		}
		if !ok {
			if strings.HasPrefix(r.URL.Path, "/api/") {
				apiError(w, http.StatusUnauthorized, "no session: pair this browser first (POST /api/session with a code from `clawedge web pair`)")
			} else {
				http.Redirect(w, r, "/pair", http.StatusSeeOther)
			}
			return
		}
		ctx := context.WithValue(r.Context(), ctxKey{}, se)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			got, rest := csrfOf(r), (*multipart.Reader)(nil)
			if got == "" {
				got, rest = multipartCSRF(r)
			}
			if got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(se.CSRF)) != 1 {
				apiError(w, http.StatusForbidden, "missing or wrong "+csrfHeader+" header (or a form's "+csrfField+" field)")
				return
			}
			if rest != nil {
				ctx = context.WithValue(ctx, partsKey{}, rest)
			}
		}
		next(w, r.WithContext(ctx))
	}
}
