package mcpserver

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// sameSite refuses, with 403, requests a web page could have made: an
// Origin other than the address asked for or a loopback one (the MCP
// specification asks servers to check it), and, on a loopback listener, a
// Host that is not a loopback name (DNS rebinding: a page's own name made to
// resolve to 127.0.0.1). Hosts without a browser send no Origin. The token
// keeps such a page out already; this check does not rest on it.
func sameSite(next http.Handler, loopback bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := hostOnly(r.Host)
		if loopback && !isLoopbackName(host) {
			http.Error(w, "Host "+r.Host+" is not this loopback server's", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || (u.Hostname() != host && !isLoopbackName(u.Hostname())) {
				http.Error(w, "requests from the web page at "+o+" are refused", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// hostOnly is the name or address of a Host field, without port or brackets.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
}

func isLoopbackName(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
