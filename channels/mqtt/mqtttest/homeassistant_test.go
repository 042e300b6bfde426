package mqtttest

import (
	"strings"
	"testing"
)

// TestCheckDiscovery: the checker passes a payload as Home Assistant reads
// it, and names each problem of the payloads clawedge published before
// issue 24 (object_id, availability payloads at the top level, state_class
// measurement on a timestamp) and of typical mistakes.
func TestCheckDiscovery(t *testing.T) {
	const good = `{"name":"freezer","unique_id":"clawedge_g_freezer","default_entity_id":"sensor.g_freezer",
		"state_topic":"clawedge/g/freezer/state","unit_of_measurement":"°C","device_class":"temperature","state_class":"measurement",
		"qos":1,"availability":[{"topic":"clawedge/g/status","payload_available":"online","payload_not_available":"offline"}],
		"availability_mode":"latest","device":{"identifiers":["clawedge_g"],"name":"g","manufacturer":"clawedge"},
		"origin":{"name":"clawedge"},"enabled_by_default":true}`
	if _, _, err := CheckDiscovery(Message{Topic: "homeassistant/sensor/g/freezer/config", Payload: good}); err != nil {
		t.Fatalf("a good payload: %v", err)
	}
	for _, tc := range []struct{ topic, from, to, want string }{
		{"sensor", `"default_entity_id":"sensor.g_freezer"`, `"object_id":"g_freezer"`, "object_id is no longer read by Home Assistant; use default_entity_id"},
		{"sensor", `"availability_mode"`, `"payload_available":"online","availability_mode"`, "payload_available at the top level is read only with availability_topic"},
		{"sensor", `"temperature"`, `"timestamp"`, "device class timestamp does not take state_class measurement"},
		{"sensor", `"temperature"`, `"temprature"`, `device_class "temprature" is not a sensor device class`},
		{"sensor", `"°C"`, `"C"`, `unit_of_measurement "C" is not one device class temperature takes`},
		{"sensor", `"measurement"`, `"average"`, `state_class "average" is not one of`},
		{"sensor", `"qos":1`, `"qos":1,"retian":true`, "unknown key retian"},
		{"sensor", `"sensor.g_freezer"`, `"switch.g_freezer"`, "default_entity_id switch.g_freezer is not sensor.<object id"},
		{"sensor", `"identifiers":["clawedge_g"],`, ``, "device has neither identifiers nor connections"},
		{"sensor", `"latest"`, `"first"`, "availability_mode first is not one of"},
		{"switch", `"state_topic"`, `"command_topic":"a/#","state_topic"`, "command_topic a/# is not a topic one can publish to"},
		{"binary_sensor", `"device_class":"temperature","state_class":"measurement",`, `"device_class":"dor",`, "device_class dor is not a binary_sensor device class"},
		{"binary_sensor", `"device_class":"temperature","state_class":"measurement",`, `"device_class":"outlet",`, "device_class outlet is not a binary_sensor device class"},
		{"binary_sensor", `"device_class":"temperature","state_class":"measurement",`, `"device_class":7,`, "device_class 7 is not a binary_sensor device class"},
		{"switch", `"device_class":"temperature","state_class":"measurement",`, `"device_class":"door",`, "device_class door is not a switch device class"},
		{"switch", `"device_class":"temperature","state_class":"measurement",`, `"device_class":"plug",`, "device_class plug is not a switch device class"},
	} {
		p := strings.Replace(good, tc.from, tc.to, 1)
		if p == good {
			t.Fatalf("%q is not in the payload", tc.from)
		}
		if tc.topic != "sensor" {
			p = strings.NewReplacer(`"unit_of_measurement":"°C",`, "", `"sensor.g_freezer"`, `"`+tc.topic+`.g_freezer"`).Replace(p)
		}
		_, _, err := CheckDiscovery(Message{Topic: "homeassistant/" + tc.topic + "/g/freezer/config", Payload: p})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with %s: %v, want %q", tc.topic, tc.to, err, tc.want)
		}
	}
}

// TestCheckDiscoveryPinClasses: a switch and a binary sensor with each of
// their device classes pass, written in any case (Home Assistant lowers the
// class before looking it up), and so do both without one.
func TestCheckDiscoveryPinClasses(t *testing.T) {
	const pin = `{"name":"p","unique_id":"clawedge_g_p","default_entity_id":"COMPONENT.g_p","state_topic":"clawedge/g/p/state",
		"command_topic":"clawedge/g/p/set","payload_on":"ON","payload_off":"OFF","qos":1CLASS,
		"availability":[{"topic":"clawedge/g/status","payload_available":"online","payload_not_available":"offline"}],
		"availability_mode":"latest","device":{"identifiers":["clawedge_g"],"name":"g"},"origin":{"name":"clawedge"}}`
	f := HomeAssistant()
	for _, component := range []string{"switch", "binary_sensor"} {
		classes := f.Components[component].DeviceClasses
		if len(classes) == 0 {
			t.Fatalf("%s has no device classes in homeassistant.json", component)
		}
		for _, class := range append([]string{"", strings.ToUpper(classes[0])}, classes...) {
			p := strings.ReplaceAll(pin, "COMPONENT", component)
			if class != "" {
				p = strings.Replace(p, "CLASS", `,"device_class":"`+class+`"`, 1)
			} else {
				p = strings.Replace(p, "CLASS", "", 1)
			}
			if component == "binary_sensor" {
				p = strings.Replace(p, `"command_topic":"clawedge/g/p/set",`, "", 1)
			}
			if _, got, err := CheckDiscovery(Message{Topic: "homeassistant/" + component + "/g/p/config", Payload: p}); err != nil {
				t.Errorf("%s with class %q: %v", component, class, err)
			} else if class != "" && got["device_class"] != class {
				t.Errorf("%s: device_class %v, want %s", component, got["device_class"], class)
			}
		}
	}
}
