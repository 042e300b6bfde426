package daemon

// This file: the board's sensors (board.sensors; docs/sensors.md): opened
// on the board with the Core, their tools registered, and a sampler that
// reads each at its interval into the store's history and tells waiting
// goals what it read.

import (
	"context"
	"sync"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// registerSensors opens the configured sensors and registers sensor/*
// (and, on the simulated board, sim/set).
func (a *Core) registerSensors() error {
	set, err := sensors.Open(a.board, sensors.FromConfig(a.cfg.Board), sensors.Options{})
	if err != nil {
		return err
	}
	a.sensors = set
	if a.store != nil && len(set.Sensors()) > 0 {
		if a.history, err = a.store.History(store.HistoryOptions{}); err != nil {
			return err
		}
	}
	if err := sensors.Register(a.reg, set, a.history); err != nil {
		return err
	}
	// On the config's word, not the set's: a Listing opens a simulated board
	// for any config, and sim/set must not be listed for a real one.
	if (a.cfg.Board.Driver == "" || a.cfg.Board.Driver == "sim") && len(set.Sensors()) > 0 {
		return sensors.RegisterSim(a.reg, set)
	}
	return nil
}

// sensorRead is the read a goal's check makes of one quantity (and, for a
// sensor of one quantity, of the sensor as a whole).
func sensorRead(name string, q sensors.Quantity) string {
	return tools.CommandText("sensor/read", []grammar.Param{
		{Key: "name", Value: grammar.StringValue(name)}, {Key: "quantity", Value: grammar.StringValue(string(q))}})
}

// serveSensors samples every sensor at its interval until ctx ends.
func (a *Core) serveSensors(ctx context.Context, wg *sync.WaitGroup) error {
	for _, s := range a.sensors.Sensors() {
		for _, q := range s.Quantities() {
			a.feed.Provide(sensorRead(s.Name(), q))
		}
		if len(s.Quantities()) == 1 {
			a.feed.Provide(tools.CommandText("sensor/read", []grammar.Param{{Key: "name", Value: grammar.StringValue(s.Name())}}))
		}
	}
	smp := sensors.NewSampler(a.sensors, sensors.SamplerOptions{History: a.history, Log: a.warn, OnSample: a.sampled})
	wg.Go(func() {
		if err := smp.Run(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("sensors: sampling stopped", "err", err)
		}
	})
	return nil
}

// sampled tells the goals waiting on a sensor what it read.
func (a *Core) sampled(s sensors.Sample) {
	if s.Err != nil {
		return
	}
	for _, r := range s.Readings {
		a.feed.Publish(sensorRead(s.Sensor.Name(), r.Quantity), r.Value, s.Time)
		if len(s.Sensor.Quantities()) == 1 {
			a.feed.Publish(tools.CommandText("sensor/read", []grammar.Param{{Key: "name", Value: grammar.StringValue(s.Sensor.Name())}}), r.Value, s.Time)
		}
	}
}
