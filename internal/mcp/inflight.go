package mcp

import (
	"context"
	"encoding/json"
	"sync"
)

// inflight are the peer's requests being served, by id, so that its
// notifications/cancelled can cancel one.
type inflight struct {
	mu sync.Mutex
	m  map[string]context.CancelFunc
}

// start registers request id; end must be called when it is answered.
func (f *inflight) start(id json.RawMessage, cancel context.CancelFunc) (end func()) {
	f.mu.Lock()
	if f.m == nil {
		f.m = map[string]context.CancelFunc{}
	}
	f.m[idKey(id)] = cancel
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.m, idKey(id))
		f.mu.Unlock()
		cancel()
	}
}

// cancelled takes a notifications/cancelled: the request it names, if
// still served, is cancelled.
func (f *inflight) cancelled(params json.RawMessage) {
	var p cancelledParams
	if json.Unmarshal(params, &p) != nil {
		return
	}
	f.mu.Lock()
	if cancel := f.m[idKey(p.RequestID)]; cancel != nil {
		cancel()
	}
	f.mu.Unlock()
}

// cancelAll cancels every request (the connection is over).
func (f *inflight) cancelAll() {
	f.mu.Lock()
	for _, cancel := range f.m {
		cancel()
	}
	f.mu.Unlock()
}
