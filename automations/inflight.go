package automations

import "sync"

// inFlight counts the runs in progress. It is not a sync.WaitGroup because
// runs start from events at any time, also while someone waits (a test between
// two events, a shutdown while a line arrives), and a WaitGroup forbids an Add
// from zero concurrent with Wait; here a wait just sees the count at that
// moment and waits until it is zero.
type inFlight struct {
	mu   sync.Mutex
	n    int
	zero *sync.Cond
}

func (f *inFlight) add() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *inFlight) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 && f.zero != nil {
		f.zero.Broadcast()
	}
	f.mu.Unlock()
}

// wait returns once no run is in progress.
func (f *inFlight) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.zero == nil {
		f.zero = sync.NewCond(&f.mu)
	}
	for f.n > 0 {
		f.zero.Wait()
	}
}
