package httpclient

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Proxies, read from the environment as curl and net/http read them: boards
// often sit behind a site's proxy. (net/http's own ProxyFromEnvironment reads
// the environment once per process, which no test could vary, and
// golang.org/x/net's copy would link a second IDNA table.)

// proxyFunc reads the proxy settings from getenv, once. Its errors name the
// variable, never its value (a proxy URL may hold a password).
func proxyFunc(getenv func(string) string) func(*http.Request) (*url.URL, error) {
	type setting struct {
		name string
		u    *url.URL
		err  error
	}
	read := func(names ...string) setting {
		for _, n := range names {
			if v := getenv(n); v != "" {
				u, err := parseProxy(n, v)
				return setting{n, u, err}
			}
		}
		return setting{}
	}
	https := read("HTTPS_PROXY", "https_proxy")
	plain := read("HTTP_PROXY", "http_proxy")
	noProxy := getenv("NO_PROXY")
	if noProxy == "" {
		noProxy = getenv("no_proxy")
	}
	return func(r *http.Request) (*url.URL, error) {
		s := plain
		if r.URL.Scheme == "https" {
			s = https
		}
		if s.u == nil && s.err == nil {
			return nil, nil
		}
		if !useProxy(noProxy, r.URL.Hostname(), portOf(r.URL)) {
			return nil, nil
		}
		return s.u, s.err
	}
}

// parseProxy reads one variable: a URL, or host:port meaning http://.
func parseProxy(name, raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil, errors.New(name + " is not a proxy URL such as http://proxy:3128")
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
		return u, nil
	}
	return nil, errors.New(name + ": " + u.Scheme + ":// proxies are not supported, only http://, https:// and socks5://")
}

// useProxy applies NO_PROXY: comma-separated entries, each "*" (nothing is
// proxied), an IP or CIDR, a host name (matching it and its subdomains; a
// leading "." or "*." matches subdomains only), optionally with ":port".
// Like net/http, localhost and loopback addresses are never proxied.
func useProxy(noProxy, host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	ip := net.ParseIP(host)
	if host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return false
	}
	for _, e := range strings.Split(noProxy, ",") {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == "":
			continue
		case e == "*":
			return false
		}
		if _, cidr, err := net.ParseCIDR(e); err == nil {
			if ip != nil && cidr.Contains(ip) {
				return false
			}
			continue
		}
		if h, p, err := net.SplitHostPort(e); err == nil {
			if p != port {
				continue
			}
			e = h
		}
		e = strings.TrimPrefix(strings.Trim(e, "[]"), "*")
		if eip := net.ParseIP(e); eip != nil {
			if ip != nil && ip.Equal(eip) {
				return false
			}
			continue
		}
		e = strings.TrimSuffix(e, ".")
		if strings.HasPrefix(e, ".") {
			if strings.HasSuffix(host, e) {
				return false
			}
		} else if host == e || strings.HasSuffix(host, "."+e) {
			return false
		}
	}
	return true
}
