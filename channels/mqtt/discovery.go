package mqtt

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Home Assistant MQTT discovery: one retained config message per entity at
// <prefix>/<component>/<node>/<name>/config, following
// https://www.home-assistant.io/integrations/mqtt/#mqtt-discovery and the
// switch.mqtt, binary_sensor.mqtt and sensor.mqtt pages. An empty retained
// message at the same topic removes the entity, which is how a pin taken out
// of the config disappears from Home Assistant.

// storeBucket holds what this channel keeps between runs: the discovery
// topics published (so that the ones no longer configured can be cleared)
// and the command dedupe records (inbox.go).
const storeBucket = "mqtt"

// deviceJSON is Home Assistant's device block: every entity carries the same
// one, which groups them under one device.
type deviceJSON struct {
	Identifiers  []string `json:"identifiers"`
	Name         string   `json:"name"`
	Manufacturer string   `json:"manufacturer"`
	Model        string   `json:"model,omitempty"`
	SWVersion    string   `json:"sw_version,omitempty"`
}

// availabilityJSON is one entry of the availability list, with its own
// payloads: Home Assistant reads payload_available and payload_not_available
// at the top level only with the single availability_topic form
// (homeassistant/components/mqtt/schemas.py, the availability schemas).
type availabilityJSON struct {
	Topic            string `json:"topic"`
	PayloadAvailable string `json:"payload_available"`
	PayloadNotAvail  string `json:"payload_not_available"`
}

// entityConfig is one discovery payload; the fields a component does not
// use are left out. default_entity_id replaces object_id, which Home
// Assistant warned about from 2025.10 and ignores from 2026.4; it is the
// entity id Home Assistant gives the entity when it first sees it
// (<component>.<object id>).
type entityConfig struct {
	Name             string             `json:"name"`
	UniqueID         string             `json:"unique_id"`
	DefaultEntityID  string             `json:"default_entity_id"`
	StateTopic       string             `json:"state_topic"`
	CommandTopic     string             `json:"command_topic,omitempty"`
	PayloadOn        string             `json:"payload_on,omitempty"`
	PayloadOff       string             `json:"payload_off,omitempty"`
	Unit             string             `json:"unit_of_measurement,omitempty"`
	DeviceClass      string             `json:"device_class,omitempty"`
	StateClass       string             `json:"state_class,omitempty"`
	QoS              int                `json:"qos"`
	Retain           bool               `json:"retain,omitempty"`
	Availability     []availabilityJSON `json:"availability"`
	AvailabilityMode string             `json:"availability_mode"`
	Device           deviceJSON         `json:"device"`
	Origin           originJSON         `json:"origin"`
	EnabledByDefault bool               `json:"enabled_by_default"`
}

// originJSON tells Home Assistant which software published the config.
type originJSON struct {
	Name      string `json:"name"`
	SWVersion string `json:"sw_version,omitempty"`
}

// slug is s as Home Assistant writes an object id: lowercase letters,
// digits and _ (its slugify turns the rest into _).
func slug(s string) string {
	return strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "_"), "_")
}

var nonSlug = regexp.MustCompile(`[^a-z0-9_]+`)

func (c *Channel) configTopic(e Entity) string {
	return c.o.Prefix + "/" + string(e.Kind) + "/" + c.o.Node + "/" + e.Name + "/config"
}

// config is e's discovery payload.
func (c *Channel) config(e Entity) entityConfig {
	id := "clawedge_" + c.o.Node
	name := c.o.Device.Name
	if name == "" {
		name = c.o.Node
	}
	ec := entityConfig{
		Name: e.Name, UniqueID: id + "_" + e.Name, DefaultEntityID: string(e.Kind) + "." + slug(c.o.Node+"_"+e.Name),
		StateTopic: c.stateTopic(e.Name), QoS: 1,
		Availability:     []availabilityJSON{{Topic: c.availabilityTopic(), PayloadAvailable: "online", PayloadNotAvail: "offline"}},
		AvailabilityMode: "latest",
		Device: deviceJSON{Identifiers: []string{id}, Name: name, Manufacturer: "clawedge",
			Model: c.o.Device.Model, SWVersion: c.o.Device.SWVersion},
		Origin:           originJSON{Name: "clawedge", SWVersion: c.o.Device.SWVersion},
		EnabledByDefault: true,
		DeviceClass:      e.DeviceClass,
	}
	switch e.Kind {
	case Switch:
		ec.CommandTopic = c.commandTopic(e.Name)
		ec.PayloadOn, ec.PayloadOff = On, Off
	case BinarySensor:
		ec.PayloadOn, ec.PayloadOff = On, Off
	case Sensor:
		ec.Unit, ec.StateClass = e.Unit, e.StateClass
	}
	if e.Available != nil {
		// Available only while the board is online and the entity's
		// source answers: both entries must say so.
		ec.Availability = append(ec.Availability, availabilityJSON{Topic: c.entityAvailabilityTopic(e.Name), PayloadAvailable: "online", PayloadNotAvail: "offline"})
		ec.AvailabilityMode = "all"
	}
	return ec
}

// discover publishes every entity's config and clears the configs published
// before for entities no longer configured. The topics are recorded before
// anything is published, so that a crash in between still leaves every
// topic ever published on record to be cleared later.
func (c *Channel) discover() error {
	var prev []string
	if b, ok, err := c.o.Store.Get(storeBucket, c.discoveredKey()); err != nil {
		return err
	} else if ok {
		if err := json.Unmarshal(b, &prev); err != nil {
			c.log.Warn("mqtt: the record of published discovery topics is unreadable; starting afresh", "err", err)
			prev = nil
		}
	}
	now := map[string]entityConfig{}
	if c.o.Prefix != "" {
		for _, e := range c.o.Entities {
			now[c.configTopic(e)] = c.config(e)
		}
	}
	cur := make([]string, 0, len(now))
	for t := range now {
		cur = append(cur, t)
	}
	sort.Strings(cur)
	all := append(slices.Clone(cur), prev...)
	sort.Strings(all)
	if err := c.putTopics(slices.Compact(all)); err != nil {
		return err
	}
	for _, t := range prev {
		if _, ok := now[t]; !ok {
			c.log.Info("mqtt: removing an entity no longer configured", "topic", t)
			if err := c.publishWait(t, ""); err != nil {
				return err // still on record: cleared at the next connect
			}
		}
	}
	for _, t := range cur {
		b, err := json.Marshal(now[t])
		if err != nil {
			return err
		}
		c.send(t, string(b))
	}
	return c.putTopics(cur)
}

func (c *Channel) discoveredKey() string { return "discovered/" + c.o.Node }

func (c *Channel) putTopics(topics []string) error {
	b, err := json.Marshal(topics)
	if err != nil {
		return err
	}
	return c.o.Store.Put(storeBucket, c.discoveredKey(), b)
}
