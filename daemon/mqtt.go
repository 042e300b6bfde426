package daemon

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels/mqtt"
	"github.com/clawedge/clawedge/hal"
)

// serveMQTT starts the MQTT channel when mqtt: is configured, and reports
// whether it did.
func (a *Core) serveMQTT(ctx context.Context, wg *sync.WaitGroup) (bool, error) {
	mc := a.cfg.MQTT
	if mc == nil {
		return false, nil
	}
	entities, err := a.mqttEntities()
	if err != nil {
		return false, err
	}
	prefix := mc.Discovery.Prefix
	if !mc.Discovery.Enabled {
		prefix = ""
	}
	ch, err := mqtt.New(mqtt.Options{
		Broker: mc.Broker, CAFile: mc.CAFile, Username: mc.Username, Password: mc.Password.Reveal(),
		ClientID: mc.ClientID, Prefix: prefix, Node: mc.Discovery.Node,
		Device:   mqtt.Device{Name: mc.Discovery.Node, Model: "clawedge on " + a.board.Driver(), SWVersion: a.version},
		Entities: entities, Runner: a.runner, Store: a.store, Log: a.log,
	})
	if err != nil {
		return false, err
	}
	a.mqttPub.Bind(ch)
	a.mqttCh = ch
	wg.Go(func() { ch.Run(ctx); a.mqttPub.Bind(nil) })
	return true, nil
}

// mqttEntities maps the exposed pins and sensors onto entities: outputs are
// switches, inputs with edge detection binary sensors, sensors sensors; a
// pin has the device class mqtt.device_classes gives it.
func (a *Core) mqttEntities() ([]mqtt.Entity, error) {
	mc := a.cfg.MQTT
	names := mc.Expose
	explicit := names != nil
	if !explicit {
		names = append(slices.Sorted(maps.Keys(a.cfg.Board.Pins)), slices.Sorted(maps.Keys(mc.Sensors))...)
	}
	boardSensors := map[string]bool{} // the board's sensors and their entities, which expose may name
	for _, s := range a.sensors.Sensors() {
		boardSensors[s.Name()] = true
		for _, q := range s.Quantities() {
			boardSensors[sensorEntityName(s.Name(), q)] = true
		}
	}
	var out []mqtt.Entity
	taken := map[string]bool{}
	for _, name := range names {
		if boardSensors[name] && mc.Sensors[name].Read == "" {
			continue // below
		}
		taken[name] = true
		if s, ok := mc.Sensors[name]; ok {
			out = append(out, mqtt.Entity{Name: name, Kind: mqtt.Sensor, Unit: s.Unit, DeviceClass: s.DeviceClass, StateClass: s.SensorStateClass(),
				Watch: mqtt.SensorWatch(a.runner, s.Read, s.Field, time.Duration(s.Every), a.log)})
			continue
		}
		pin, err := a.board.Pin(name)
		if err != nil {
			return nil, fmt.Errorf("mqtt.expose: %w", err)
		}
		switch {
		case pin.Mode() == hal.ModeOut:
			out = append(out, mqtt.Entity{Name: name, Kind: mqtt.Switch, DeviceClass: mc.DeviceClasses[name], Watch: outputWatch(pin)})
		case pin.Config().Edge == hal.EdgeBoth:
			out = append(out, mqtt.Entity{Name: name, Kind: mqtt.BinarySensor, DeviceClass: mc.DeviceClasses[name], Watch: inputWatch(pin)})
		case explicit:
			return nil, fmt.Errorf("mqtt.expose: input pin %q must detect both edges (edge: both) to be published", name)
		default:
			a.log.Info("mqtt: input pin not published: it does not detect both edges", "pin", name)
		}
	}
	// The board's sensors, a sensor entity a quantity: all of them by
	// default; with expose, those it names (the sensor, or one quantity's
	// entity, greenhouse_temperature).
	for _, e := range a.sensorEntities(func(sensor, entity string) bool {
		return !explicit || slices.Contains(names, sensor) || slices.Contains(names, entity)
	}) {
		if taken[e.Name] {
			return nil, fmt.Errorf("mqtt: board.sensors' entity %q has the name of a pin or of mqtt.sensors' entry: Home Assistant would get two entities of one name; rename one", e.Name)
		}
		taken[e.Name] = true
		out = append(out, e)
	}
	return out, nil
}

func onOff(l hal.Level) string {
	if l == hal.High {
		return mqtt.On
	}
	return mqtt.Off
}

// outputWatch follows an output's writes, whoever makes them.
func outputWatch(pin *hal.Pin) func(context.Context, func(string)) error {
	return levelWatch(pin, pin.WaitForWrite)
}

// inputWatch follows an input's edges.
func inputWatch(pin *hal.Pin) func(context.Context, func(string)) error {
	return levelWatch(pin, func(ctx context.Context, _ hal.Level) (hal.Level, error) {
		return pin.WaitForEdge(ctx, hal.EdgeBoth)
	})
}

// levelWatch publishes a pin's level, then each new one next returns.
func levelWatch(pin *hal.Pin, next func(ctx context.Context, seen hal.Level) (hal.Level, error)) func(context.Context, func(string)) error {
	return func(ctx context.Context, publish func(string)) error {
		l, err := pin.Read()
		if err != nil {
			return err
		}
		for {
			publish(onOff(l))
			if l, err = next(ctx, l); err != nil {
				return err
			}
		}
	}
}

// mqttMessages is the automations' source of MQTT messages (when: {mqtt: ...}).
func (a *Core) mqttMessages(filter string) (func(context.Context) (string, error), error) {
	if a.mqttCh == nil {
		return nil, fmt.Errorf("mqtt trigger %q: no mqtt: section, so no broker", filter)
	}
	return a.mqttCh.Messages(filter)
}
