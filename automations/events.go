package automations

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"time"

	"github.com/clawedge/clawedge/tools"
)

// Event triggers: each pin, serial and read automation has a goroutine that
// waits for its events (a pin edge from the kernel, a line from the port, the
// next poll of a reading) and fires the automation through Event. They do not
// depend on the wall clock, so the untrusted-clock gate does not hold them.

// retryAfter is how long a failing event source is left alone before the next
// try: a pin or port that keeps failing must not spin.
const retryAfter = 5 * time.Second

// watch starts j's watcher, if it has one. Called with s.mu held, once Run runs.
func (s *Scheduler) watch(j *job) {
	if !s.watching || j.cancel != nil {
		return
	}
	var fn func(context.Context, Spec)
	switch j.spec.Kind() {
	case "pin":
		fn = s.watchPin
	case "serial":
		fn = s.watchSerial
	case "mqtt":
		fn = s.watchMQTT
	case "read":
		fn = s.watchRead
	default:
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	j.cancel = cancel
	s.watchers.Add(1)
	go func() {
		defer s.watchers.Done()
		fn(ctx, j.spec)
	}()
}

// sleep waits d on the scheduler's clock; false when ctx ended.
func (s *Scheduler) sleep(ctx context.Context, d time.Duration) bool {
	c, stop := s.clock.NewTimer(d)
	defer stop()
	select {
	case <-ctx.Done():
		return false
	case <-c:
		return true
	}
}

// watchPin fires on the edge asked for once the level has been stable for
// max(debounce, for): every edge inside that window restarts it, so a bouncing
// contact fires once, and a press shorter than for: not at all.
func (s *Scheduler) watchPin(ctx context.Context, sp Spec) {
	if s.opt.Effects.Edges == nil {
		s.log.Error("automation not watching its pin: no board", "automation", sp.Name)
		return
	}
	wait, err := s.opt.Effects.Edges(sp.Pin)
	if err != nil {
		s.log.Error("automation not watching its pin", "automation", sp.Name, "err", err)
		return
	}
	edges := make(chan bool)
	go func() {
		for {
			high, err := wait(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				s.log.Warn("automation: waiting for an edge", "automation", sp.Name, "pin", sp.Pin, "err", err)
				if !s.sleep(ctx, retryAfter) {
					return
				}
				continue
			}
			select {
			case edges <- high:
			case <-ctx.Done():
				return
			}
		}
	}()
	window := max(sp.Debounce, sp.For)
	var settled <-chan time.Time
	stop := func() bool { return false }
	defer func() { stop() }()
	var before, last, pending bool
	for {
		select {
		case <-ctx.Done():
			return
		case high := <-edges:
			if !pending {
				before, pending = !high, true
			}
			last = high
			if window == 0 {
				pending = false
				s.pinFire(sp, before, last)
				continue
			}
			stop()
			settled, stop = s.clock.NewTimer(window)
		case <-settled:
			settled, pending = nil, false
			s.pinFire(sp, before, last)
		}
	}
}

func (s *Scheduler) pinFire(sp Spec, before, after bool) {
	ok := before != after
	switch sp.Edge {
	case "rising":
		ok = ok && after
	case "falling":
		ok = ok && !after
	}
	if ok {
		s.Event(sp.Name, map[bool]string{true: "high", false: "low"}[after])
	}
}

// watchSerial fires on every line of the port that the regular expression finds.
func (s *Scheduler) watchSerial(ctx context.Context, sp Spec) {
	s.watchMatches(ctx, sp, "port", sp.Serial, s.opt.Effects.Lines)
}

// watchMQTT fires on each message on the topic filter whose payload Match finds.
func (s *Scheduler) watchMQTT(ctx context.Context, sp Spec) {
	s.watchMatches(ctx, sp, "topic", sp.MQTT, s.opt.Effects.Messages)
}

// watchMatches fires on each text from source (a port's lines, a topic's
// payloads) that sp.Match finds.
func (s *Scheduler) watchMatches(ctx context.Context, sp Spec, what, source string, open func(string) (func(context.Context) (string, error), error)) {
	re, err := regexp.Compile(sp.Match)
	if err != nil || open == nil {
		s.log.Error("automation not watching its "+what, "automation", sp.Name, "err", err)
		return
	}
	next, err := open(source)
	if err != nil {
		s.log.Error("automation not watching its "+what, "automation", sp.Name, "err", err)
		return
	}
	for {
		text, err := next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.log.Warn("automation: reading its "+what, "automation", sp.Name, what, source, "err", err)
			if !s.sleep(ctx, retryAfter) {
				return
			}
			continue
		}
		if re.MatchString(text) {
			s.Event(sp.Name, text)
		}
	}
}

// watchRead polls the read command every Every. It fires once when the value
// has been beyond a threshold for For, and is armed again only when the value
// has come back inside by Hysteresis, so a value hovering at the threshold does
// not fire over and over.
func (s *Scheduler) watchRead(ctx context.Context, sp Spec) {
	var since time.Time // when the value went beyond; zero: it is not
	fired := false
	for {
		v, err := s.readValue(ctx, sp)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			level, skipped := s.logs.level(sp.Name, "read", err.Error(), s.clock.Now(), slog.LevelWarn)
			s.log.Log(context.Background(), level, "automation: read failed", "automation", sp.Name, "err", err, "not_logged_since", skipped)
		case fired:
			if sp.back(v) {
				fired, since = false, time.Time{}
			}
		case sp.beyond(v):
			now := s.clock.Now()
			if since.IsZero() {
				since = now
			}
			if now.Sub(since) >= sp.For {
				fired = true
				s.Event(sp.Name, strconv.FormatFloat(v, 'f', -1, 64))
			}
		default:
			since = time.Time{}
		}
		if !s.sleep(ctx, sp.Every) {
			return
		}
	}
}

func (sp *Spec) beyond(v float64) bool {
	return tools.Threshold{Above: sp.Above, Below: sp.Below}.Beyond(v)
}

func (sp *Spec) back(v float64) bool {
	return tools.Threshold{Above: sp.Above, Below: sp.Below}.Back(v, sp.Hysteresis)
}

// readValue runs the read command on the call path and takes its number
// (tools.Result.Number, the rule goals' checks use too).
func (s *Scheduler) readValue(ctx context.Context, sp Spec) (float64, error) {
	e := s.opt.Effects
	if e.Runner == nil {
		return 0, fmt.Errorf("no tools")
	}
	cmd, err := e.parse(sp.Read)
	if err != nil {
		return 0, err
	}
	rep, err := e.Runner.Run(ctx, Caller(sp), cmd)
	if err != nil {
		return 0, err
	}
	if len(rep.Stages) == 0 || len(rep.Stages[len(rep.Stages)-1].Calls) == 0 {
		return 0, fmt.Errorf("no result")
	}
	return rep.Stages[len(rep.Stages)-1].Calls[0].Result.Number()
}
