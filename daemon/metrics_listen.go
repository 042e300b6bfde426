package daemon

import (
	"net"
	"net/http"

	"github.com/clawedge/clawedge/internal/fairlisten"
)

// metricsPerPeer bounds the metrics endpoint's connections from one address
// (an IPv6 /64), within MetricsMaxConns.
const metricsPerPeer = 8

// metricsListener is ln with the endpoint's bounds (internal/fairlisten): at
// most MetricsMaxConns connections, metricsPerPeer of one address; at the
// cap, one that holds a slot without a whole request, or idle, is closed to
// make room for the new one, so that idle connections cannot keep
// Prometheus out (behind netutil.LimitListener, 16 keep-alive ones held
// every slot for their 30 s of idle time); an idle one is closed after 2 s
// (the endpoint takes no credentials: every scraper is a stranger to it),
// and half the slots at most are serving requests. It wraps srv's handler
// and sets its connection hooks.
func metricsListener(ln net.Listener, srv *http.Server) net.Listener {
	fl := fairlisten.New(ln, fairlisten.Limits{MaxConns: MetricsMaxConns, PerPeer: metricsPerPeer})
	srv.Handler = fl.Guard(srv.Handler, nil)
	fl.Hook(srv)
	return fl
}
