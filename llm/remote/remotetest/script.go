// Package remotetest holds what the fake model servers (openaitest,
// anthropictest) share: the script of replies a test queues and the record of
// the requests received.
package remotetest

import "sync"

// Script answers requests Q with queued replies R, in order, and records the
// requests. The fake servers embed it, so Push, Default, Requests and Pending
// are theirs. The zero value is ready; it is safe for concurrent use.
type Script[Q, R any] struct {
	mu       sync.Mutex
	queue    []R
	requests []Q
	fallback func(Q) R
}

// Push queues replies, answered in order, one per request.
func (s *Script[Q, R]) Push(replies ...R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Default sets how a request that finds the queue empty is answered: f
// makes its reply from the request (e.g. from the last tool result it
// carries). nil restores the 400 that says no reply was scripted.
func (s *Script[Q, R]) Default(f func(Q) R) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fallback = f
}

// Requests returns the requests received so far, in order.
func (s *Script[Q, R]) Requests() []Q {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Q(nil), s.requests...)
}

// Pending is the number of queued replies not used yet.
func (s *Script[Q, R]) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Next records a request and returns its reply: the next queued one, else
// the Default's; ok is false when there is neither. n counts the requests
// so far, this one included.
func (s *Script[Q, R]) Next(req Q) (reply R, n int, ok bool) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n = len(s.requests)
	ok = len(s.queue) > 0
	if ok {
		reply, s.queue = s.queue[0], s.queue[1:]
	}
	fallback := s.fallback
	s.mu.Unlock()
	if !ok && fallback != nil {
		reply, ok = fallback(req), true
	}
	return reply, n, ok
}
