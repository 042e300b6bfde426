package daemon

import (
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels/web"
)

// webDoctor is doctor's findings for the dashboard's overview: the checks of
// `clawedge doctor` that make sense inside the running daemon. Left out are
// those that would open what the daemon holds (the store, the board, the
// ports), dial the daemon itself (MCP states), rebuild the memory index, or
// wait on the network (Telegram, MQTT, the remote models): a page must load
// in milliseconds. They run in the background, at most once a
// webDoctorEvery and only while someone looks, so a page never waits for
// them and an idle daemon never runs them.
type webDoctor struct {
	a *Core

	mu      sync.Mutex
	last    []web.Finding
	at      time.Time
	running bool
}

// Doctor implements web.Facts. It never waits for the checks: the first
// call starts them and returns nil (the overview says they are running),
// and a call after webDoctorEvery starts them again and returns the last.
func (f webFacts) Doctor() []web.Finding {
	d := f.doctor
	if d == nil {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.running && (d.at.IsZero() || time.Since(d.at) > webDoctorEvery) {
		d.running = true
		go func() {
			found := d.run()
			d.mu.Lock()
			d.last, d.at, d.running = found, time.Now(), false
			d.mu.Unlock()
		}()
	}
	return d.last
}

func (d *webDoctor) run() []web.Finding {
	if d.a.cfg == nil || d.a.opt.Findings == nil {
		return nil
	}
	return d.a.opt.Findings(d.a.cfg)
}
