package automations

import (
	"encoding/json"
	"fmt"
	"time"
)

// Status is one automation as auto/list and `clawedge auto list` show it.
type Status struct {
	Name    string    `json:"name"`
	Trigger string    `json:"trigger"`
	Next    time.Time `json:"next,omitzero"`
	Last    time.Time `json:"last,omitzero"`
	Outcome string    `json:"outcome,omitempty"`
	Paused  bool      `json:"paused,omitempty"`
	Running bool      `json:"running,omitempty"`
	Added   bool      `json:"added,omitempty"`
	Creator string    `json:"creator"`        // whose rights its runs have: "config", "telegram:42", "the model for telegram:42"
	Held    string    `json:"held,omitempty"` // why a time trigger cannot fire now
}

// ClockTrusted reports whether time triggers may fire (the clock is after the
// build date and, where known, synchronised).
func (s *Scheduler) ClockTrusted() bool {
	return s.clockTrusted(s.clock.Now())
}

// List returns every automation, by name.
func (s *Scheduler) List() []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	trusted := s.clockTrusted(s.clock.Now())
	var out []Status
	for _, name := range s.names() {
		j := s.jobs[name]
		st := Status{Name: name, Trigger: j.spec.Trigger(), Last: j.st.Last, Outcome: j.st.Outcome,
			Paused: j.st.Paused, Running: j.running, Added: j.spec.Added, Creator: CreatorOf(j.spec).String()}
		if j.spec.timed() {
			if !trusted {
				st.Held = "the clock is not trusted yet (before this build's date, or not synchronised)"
			} else if j.ready {
				st.Next = j.next
			} else {
				st.Next = j.nextTime(s.clock.Now())
			}
		}
		out = append(out, st)
	}
	return out
}

// Add creates an automation at run time; it is kept in the store.
func (s *Scheduler) Add(sp Spec) error {
	sp.Added = true
	if sp.CatchUp == "" {
		sp.CatchUp = "skip"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.addJob(sp); err != nil {
		return err
	}
	if err := s.saveAdded(); err != nil {
		delete(s.jobs, sp.Name)
		return err
	}
	s.watch(s.jobs[sp.Name])
	s.poke()
	return nil
}

// Remove deletes an automation added at run time (configured ones live in the
// config file: pause them instead).
func (s *Scheduler) Remove(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[name]
	if j == nil {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	if !j.spec.Added {
		return fmt.Errorf("automation %s is in the config file: remove it there, or pause it", name)
	}
	delete(s.jobs, name)
	if err := s.saveAdded(); err != nil {
		s.jobs[name] = j
		return err
	}
	if j.cancel != nil {
		j.cancel()
	}
	if err := s.opt.Store.Delete(stateBucket, name); err != nil {
		return err
	}
	s.poke()
	return nil
}

// SetPaused pauses or resumes an automation; the state survives restarts.
func (s *Scheduler) SetPaused(name string, paused bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[name]
	if j == nil {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	j.st.Paused = paused
	if err := s.save(j); err != nil {
		return err
	}
	s.poke()
	return nil
}

// RunNow runs an automation once now, whatever its trigger (auto/run). Its
// condition still applies.
func (s *Scheduler) RunNow(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[name]
	if j == nil {
		return fmt.Errorf("%w: %s", ErrUnknown, name)
	}
	if j.running {
		return fmt.Errorf("automation %s is running", name)
	}
	last := j.st.Last
	s.fire(j, s.clock.Now(), "run by hand")
	// A run by hand is not the trigger's: the schedule goes on from where it was.
	j.st.Last = last
	return nil
}

func (s *Scheduler) loadAdded() ([]Spec, error) {
	raw, found, err := s.opt.Store.Get(addedBucket, addedKey)
	if err != nil || !found {
		return nil, err
	}
	var specs []Spec
	if err := json.Unmarshal(raw, &specs); err != nil {
		return nil, fmt.Errorf("automations added at run time are unreadable: %w", err)
	}
	return specs, nil
}

func (s *Scheduler) saveAdded() error {
	var specs []Spec
	for _, name := range s.names() {
		if j := s.jobs[name]; j.spec.Added {
			specs = append(specs, j.spec)
		}
	}
	b, err := json.Marshal(specs)
	if err != nil {
		return err
	}
	return s.opt.Store.Put(addedBucket, addedKey, b)
}
