package config

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// TestHomeAssistantFacts: the lists config checks sensors and pins against are the
// ones the discovery checker was written from (channels/mqtt/mqtttest's
// homeassistant.json, from Home Assistant's source): a fact corrected in one
// place must be corrected in the other.
func TestHomeAssistantFacts(t *testing.T) {
	b, err := os.ReadFile("../channels/mqtt/mqtttest/homeassistant.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		StateClasses       []string            `json:"state_classes"`
		SensorUnits        map[string][]string `json:"sensor_units"`
		SensorStateClasses map[string][]string `json:"sensor_state_classes"`
		Components         map[string]struct {
			DeviceClasses []string `json:"device_classes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.StateClasses, HAStateClasses) {
		t.Errorf("state classes: %q here, %q in homeassistant.json", HAStateClasses, f.StateClasses)
	}
	for name, pair := range map[string][2]map[string][]string{
		"units":         {HASensorUnits, f.SensorUnits},
		"state classes": {HASensorStateClasses, f.SensorStateClasses},
	} {
		here, there := pair[0], pair[1]
		for k, v := range there {
			if w, ok := here[k]; !ok || !reflect.DeepEqual(w, v) {
				t.Errorf("%s of %s: %q here, %q in homeassistant.json", name, k, w, v)
			}
		}
		for k := range here {
			if _, ok := there[k]; !ok {
				t.Errorf("%s: %s is here, not in homeassistant.json", name, k)
			}
		}
	}
	for component, here := range map[string][]string{"binary_sensor": HABinarySensorDeviceClasses, "switch": HASwitchDeviceClasses} {
		if there := f.Components[component].DeviceClasses; len(there) == 0 || !reflect.DeepEqual(here, there) {
			t.Errorf("%s device classes: %q here, %q in homeassistant.json", component, here, there)
		}
	}
	if len(HASensorUnits) != len(HASensorStateClasses) {
		t.Errorf("%d classes with units, %d with state classes", len(HASensorUnits), len(HASensorStateClasses))
	}
}

// TestDefaultStateClass: measurement where Home Assistant takes it, none
// where it does not (a meter, a timestamp).
func TestDefaultStateClass(t *testing.T) {
	for dc, want := range map[string]string{"": "measurement", "temperature": "measurement", "energy": "",
		"timestamp": "", "enum": "", "weight": "measurement"} {
		if got := DefaultStateClass(dc); got != want {
			t.Errorf("%q: %q, want %q", dc, got, want)
		}
	}
	s := MQTTSensor{DeviceClass: "energy", StateClass: "none"}
	if s.SensorStateClass() != "" {
		t.Errorf("none: %q", s.SensorStateClass())
	}
}
