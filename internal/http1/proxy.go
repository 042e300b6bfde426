package http1

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// Proxies, read from the environment as curl and net/http read them: boards often sit
// behind a site's proxy. Only http:// proxies are supported:
// an https target goes through a CONNECT tunnel, an http one as an absolute-form
// request. Userinfo in the proxy URL becomes Basic Proxy-Authorization. The proxy URL
// is never shown in an error (it may hold a password): only its host:port is.

// proxy is the proxy a transport goes through.
type proxy struct {
	addr string // host:port
	auth string // Proxy-Authorization value, or ""
}

// proxyFromEnv returns the proxy for scheme://host:port, or nil for a direct
// connection. Like net/http, localhost and loopback addresses are never proxied.
func proxyFromEnv(getenv func(string) string, scheme, host, port string) (*proxy, error) {
	name := "HTTPS_PROXY"
	if scheme == "http" {
		name = "HTTP_PROXY"
	}
	raw, from := getenv(name), name
	if raw == "" {
		from = strings.ToLower(name)
		raw = getenv(from)
	}
	if raw == "" || !useProxy(getenvAny(getenv, "NO_PROXY", "no_proxy"), host, port) {
		return nil, nil
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("%s is not a proxy URL such as http://proxy:3128", from)
	}
	if u.Scheme != "http" {
		return nil, fmt.Errorf("%s: %s:// proxies are not supported, only http://", from, u.Scheme)
	}
	p := &proxy{addr: net.JoinHostPort(u.Hostname(), or(u.Port(), "80"))}
	if u.User != nil {
		pw, _ := u.User.Password()
		p.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	return p, nil
}

func getenvAny(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// useProxy applies NO_PROXY: comma-separated entries, each "*" (nothing is proxied),
// an IP or CIDR, a host name (matching it and its subdomains; a leading "." or "*."
// matches subdomains only), optionally with ":port".
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

// connect asks the proxy on conn for a tunnel to addr and reads its answer. The
// tunnel's first bytes are the TLS handshake, which the proxy cannot see into.
func (p *proxy) connect(conn net.Conn, addr string) error {
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if p.auth != "" {
		req += "Proxy-Authorization: " + p.auth + "\r\n"
	}
	if _, err := conn.Write([]byte(req + "\r\n")); err != nil {
		return fmt.Errorf("CONNECT: %w", err)
	}
	// Unbuffered beyond the reply: a byte read ahead would belong to the TLS handshake.
	br := bufio.NewReaderSize(conn, 4096)
	r, err := readHead(br)
	if err != nil {
		return fmt.Errorf("reading the proxy's answer to CONNECT: %w", err)
	}
	if r.status/100 != 2 {
		return fmt.Errorf("the proxy refused CONNECT: %d %s", r.status, r.reason)
	}
	if br.Buffered() > 0 {
		return errors.New("the proxy sent data before the tunnel was used")
	}
	return nil
}
