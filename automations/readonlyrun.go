package automations

import (
	"time"

	"github.com/clawedge/clawedge/tools"
)

// A run that only reads (its do: line calls read-only tools alone, and it
// asks the model nothing) has no effect a power cut could leave half done, so
// its state need not be on disk before and after each run: it is written at
// most once per readOnlySaveEvery, and when the scheduler stops. A sensor
// polled every 10 s then costs its grouped audit records, not two commits of
// its own every 10 s. A crash loses at most that much of its last-run record
// (its next run comes from the trigger, not from it), and such a run is never
// reported as interrupted: nothing of it needs to be.
const readOnlySaveEvery = 10 * time.Minute

// readOnlyRun reports whether sp's runs only read.
func (e Effects) readOnlyRun(sp Spec) bool {
	if sp.Do == "" || sp.Ask != "" || e.Runner == nil {
		return false
	}
	cmd, err := e.parse(sp.Do)
	if err != nil {
		return false
	}
	for _, st := range cmd.Stages {
		for _, c := range st.Calls {
			t, err := e.Runner.Registry.Lookup(c.Tool())
			if err != nil {
				return false
			}
			if _, ok := t.(tools.ReadOnly); !ok {
				return false
			}
		}
	}
	return true
}

// saveLater saves a read-only job's state when the last save is old enough,
// else marks it to be saved at the stop (saveDirty). Called with s.mu held.
func (s *Scheduler) saveLater(j *job, now time.Time) error {
	if now.Sub(j.saved) < readOnlySaveEvery {
		j.dirty = true
		return nil
	}
	j.saved, j.dirty = now, false
	return s.save(j)
}

// saveDirty saves the states saveLater held back; Run calls it when it stops.
func (s *Scheduler) saveDirty() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range s.names() {
		if j := s.jobs[name]; j.dirty {
			if err := s.save(j); err != nil {
				s.log.Error("automation state not recorded at stop", "automation", name, "err", err)
			}
			j.dirty = false
		}
	}
}
