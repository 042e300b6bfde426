package sensors

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/clawedge/clawedge/store"
)

// Sample is one read of a sensor by the Sampler: its readings, or the
// error that made it a gap.
type Sample struct {
	Sensor   *Sensor
	Readings []Reading
	Err      error
	Time     time.Time
}

// SamplerOptions configure a Sampler; every field may be left zero.
type SamplerOptions struct {
	// History receives each reading, under the series "SENSOR/QUANTITY";
	// nil: none is kept.
	History *store.History
	// OnSample is told of every sample, readings or error (for MQTT
	// states, a sensor's availability, thresholds). It runs on the
	// sensor's own goroutine: it should not block.
	OnSample func(Sample)
	// Log is told when a sensor starts failing and when it answers
	// again; a sensor that keeps failing or flaps is told of at most
	// once every Quiet, with the count of failures since.
	Log func(msg string)
	// Quiet is that interval; 0: 10 minutes.
	Quiet time.Duration
	// Now stamps the samples; nil: time.Now. A test's fake clock.
	Now func() time.Time
}

// Sampler reads each sensor at its Every into the history.
type Sampler struct {
	set  *Set
	opts SamplerOptions

	mu     sync.Mutex
	health map[string]*health
	cancel context.CancelFunc
	done   chan struct{}
}

// health is what the log has been told of a sensor: at most one failure a
// Quiet interval, and that it answers again once after a failure it was
// told of, so a flapping sensor costs two lines an interval.
type health struct {
	told     time.Time // when the log was last told of a failure
	untold   int       // failures since, not told of
	recovery bool      // a failure was told of, and no recovery since
}

// NewSampler returns a sampler of set's sensors.
func NewSampler(set *Set, opts SamplerOptions) *Sampler {
	if opts.Quiet <= 0 {
		opts.Quiet = 10 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Sampler{set: set, opts: opts, health: map[string]*health{}}
}

// Run samples every sensor, each on its own goroutine at its own interval
// (a DS18B20's 750 ms conversion does not delay a BME280), the first time
// at once, until ctx ends; then it writes the history and returns ctx's error.
func (s *Sampler) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, sn := range s.set.Sensors() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.NewTicker(sn.Every())
			defer t.Stop()
			for {
				s.SampleOnce(ctx, sn)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	wg.Wait()
	if h := s.opts.History; h != nil {
		if err := h.Flush(); err != nil {
			s.log(fmt.Sprintf("sensors: %v", err))
		}
	}
	return ctx.Err()
}

// Start runs Run in the background until Stop.
func (s *Sampler) Start(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel != nil {
		return
	}
	ctx, s.cancel = context.WithCancel(ctx)
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		s.Run(ctx)
	}()
}

// Stop ends what Start started and waits for it (the history written).
func (s *Sampler) Stop() {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel = nil
	s.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// SampleOnce reads sn once into the history and tells OnSample. A read
// cut short by ctx ending is no sample.
func (s *Sampler) SampleOnce(ctx context.Context, sn *Sensor) Sample {
	rs, err := sn.Read(ctx)
	smp := Sample{Sensor: sn, Readings: rs, Err: err, Time: s.opts.Now()}
	if ctx.Err() != nil {
		return smp
	}
	if err == nil && s.opts.History != nil {
		for _, r := range rs {
			if herr := s.opts.History.Add(sn.Name()+"/"+string(r.Quantity), smp.Time, r.Value); herr != nil {
				s.log(fmt.Sprintf("sensor %s: history: %v", sn.Name(), herr))
			}
		}
	}
	s.note(sn, err, smp.Time)
	if s.opts.OnSample != nil {
		s.opts.OnSample(smp)
	}
	return smp
}

// note tells the log what changed, quietly.
func (s *Sampler) note(sn *Sensor, err error, now time.Time) {
	s.mu.Lock()
	h := s.health[sn.Name()]
	if h == nil {
		h = &health{}
		s.health[sn.Name()] = h
	}
	var msg string
	switch {
	case err != nil && (h.told.IsZero() || now.Sub(h.told) >= s.opts.Quiet):
		msg = err.Error()
		if h.untold > 0 {
			msg += fmt.Sprintf(" (and %d failed reads since %s)", h.untold, h.told.Format(time.TimeOnly))
		}
		h.told, h.untold, h.recovery = now, 0, true
	case err != nil:
		h.untold++
	case h.recovery:
		msg = fmt.Sprintf("sensor %s answers again", sn)
		h.recovery = false
	}
	s.mu.Unlock()
	if msg != "" {
		s.log(msg)
	}
}

func (s *Sampler) log(msg string) {
	if s.opts.Log != nil {
		s.opts.Log(msg)
	}
}
