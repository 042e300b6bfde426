package daemon

// This file: the board's sensors (board.sensors; docs/sensors.md): opened
// on the board with the Core, their tools registered, and a sampler that
// reads each at its interval into the store's history and tells waiting
// goals what it read.

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels/mqtt"
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

// sampled tells the goals waiting on a sensor what it read, and those
// following the sensor (Home Assistant's entities) what it read or that it
// did not answer.
func (a *Core) sampled(s sensors.Sample) {
	a.samples.put(s)
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

// sampleBoard is the sampler's last sample of each sensor, for those who
// follow a sensor rather than read it: each new sample of a sensor wakes
// its followers. The zero value is ready.
type sampleBoard struct {
	mu      sync.Mutex
	cells   map[string]*sampleCell
	anyNext chan struct{} // closed at the next sample of any sensor (the dashboard's stream)
}

// next is a channel closed at the next sample of any sensor.
func (b *sampleBoard) next() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.anyNext == nil {
		b.anyNext = make(chan struct{})
	}
	return b.anyNext
}

type sampleCell struct {
	last    sensors.Sample
	has     bool
	changed chan struct{} // closed at the next sample
}

func (b *sampleBoard) cell(name string) *sampleCell {
	if b.cells == nil {
		b.cells = map[string]*sampleCell{}
	}
	c := b.cells[name]
	if c == nil {
		c = &sampleCell{changed: make(chan struct{})}
		b.cells[name] = c
	}
	return c
}

func (b *sampleBoard) put(s sensors.Sample) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.cell(s.Sensor.Name())
	c.last, c.has = s, true
	close(c.changed)
	c.changed = make(chan struct{})
	if b.anyNext != nil {
		close(b.anyNext)
		b.anyNext = nil
	}
}

// get is a sensor's last sample (has: there is one) and a channel closed
// at its next.
func (b *sampleBoard) get(name string) (last sensors.Sample, has bool, next <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.cell(name)
	return c.last, c.has, c.changed
}

// follow calls fn with each sample of sensor name, the last one first,
// until ctx ends.
func (b *sampleBoard) follow(ctx context.Context, name string, fn func(sensors.Sample)) error {
	for {
		last, has, next := b.get(name)
		if has {
			fn(last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-next:
		}
	}
}

// haSensorClass is the Home Assistant device class of each quantity; the
// unit is the quantity's own (°C, %, hPa, V, A, W), one each class takes.
var haSensorClass = map[sensors.Quantity]string{
	sensors.Temperature: "temperature", sensors.Humidity: "humidity", sensors.Pressure: "pressure",
	sensors.Voltage: "voltage", sensors.Current: "current", sensors.Power: "power",
}

// sensorEntityName is the Home Assistant entity of one quantity of a
// sensor: greenhouse_temperature (a topic level, and with the node the
// default entity id, sensor.garage_greenhouse_temperature).
func sensorEntityName(sensor string, q sensors.Quantity) string { return sensor + "_" + string(q) }

// sensorEntities are the entities of the board's sensors: one sensor entity
// a quantity, its state the sampler's reading of it, unavailable while the
// sensor does not answer. want says which sensors are published.
func (a *Core) sensorEntities(want func(sensor, entity string) bool) []mqtt.Entity {
	var out []mqtt.Entity
	for _, s := range a.sensors.Sensors() {
		name := s.Name()
		for _, q := range s.Quantities() {
			entity := sensorEntityName(name, q)
			if !want(name, entity) {
				continue
			}
			out = append(out, mqtt.Entity{Name: entity, Kind: mqtt.Sensor, Unit: q.Unit(), DeviceClass: haSensorClass[q], StateClass: "measurement",
				Watch: func(ctx context.Context, publish func(string)) error {
					return a.samples.follow(ctx, name, func(smp sensors.Sample) {
						for _, r := range smp.Readings {
							if r.Quantity == q && smp.Err == nil {
								publish(strconv.FormatFloat(r.Round(), 'f', -1, 64))
							}
						}
					})
				},
				Available: func(ctx context.Context, set func(bool)) error {
					return a.samples.follow(ctx, name, func(smp sensors.Sample) { set(smp.Err == nil) })
				},
			})
		}
	}
	return out
}

// SensorInfo is one sensor as `clawedge sensors` and doctor show it: what
// it is, where, and what its last read gave (or why it failed) and when.
type SensorInfo struct {
	Name      string          `json:"name"`
	Driver    string          `json:"driver"`
	Bus       string          `json:"bus"`
	Address   string          `json:"address,omitempty"` // an I²C chip's: 0x76
	ID        string          `json:"id,omitempty"`      // a 1-Wire device's: 28-00000a1b2c3d
	Where     string          `json:"where"`             // greenhouse (bme280 at 0x76 on bus "sensors")
	Every     string          `json:"every"`
	Simulated bool            `json:"simulated,omitempty"`
	Readings  []SensorReading `json:"readings,omitempty"`
	// Error is why the last read failed; "" when it did not (or none was made).
	Error string `json:"error,omitempty"`
	// At is the last read's time, zero when none was made; Age is how
	// long before the report that was, in seconds.
	At  time.Time `json:"at,omitzero"`
	Age float64   `json:"age_s,omitempty"`
}

// SensorReading is one quantity of a read.
type SensorReading struct {
	Quantity string  `json:"quantity"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Text     string  `json:"text"` // temperature 21.50 °C
}

// Sensors reports every sensor with its last read (sensors.Sensor.Last):
// the sampler's, or a tool's. With readNow each is read once first, as a
// command without a daemon (and doctor) does: nothing else has read them.
// Reading makes a chip measure, which changes nothing in the world; each
// failure is in its sensor's Error.
func (a *Core) Sensors(ctx context.Context, readNow bool) []SensorInfo {
	return SensorsOf(ctx, a.sensors, readNow)
}

// SensorsOf is Sensors of an opened set (doctor's, without a daemon).
func SensorsOf(ctx context.Context, set *sensors.Set, readNow bool) []SensorInfo {
	out := []SensorInfo{}
	if set == nil {
		return out
	}
	for _, s := range set.Sensors() {
		if readNow {
			s.Read(ctx) // its outcome is Last's
		}
		sp := s.Spec()
		si := SensorInfo{Name: s.Name(), Driver: sp.Driver, Bus: sp.Bus, ID: sp.ID, Where: s.String(), Every: s.Every().String(), Simulated: s.Simulated()}
		if sp.ID == "" {
			si.Address = fmt.Sprintf("%#02x", sp.Address)
		}
		last := s.Last()
		if !last.Time.IsZero() {
			si.At = last.Time
			si.Age = math.Round(time.Since(last.Time).Seconds()*10) / 10
		}
		if last.Err != nil {
			si.Error = last.Err.Error()
		}
		for _, r := range last.Readings {
			si.Readings = append(si.Readings, SensorReading{Quantity: string(r.Quantity), Value: r.Round(), Unit: r.Unit(), Text: r.String()})
		}
		out = append(out, si)
	}
	return out
}
