package config

import (
	"slices"
	"sort"
	"strings"
)

// What Home Assistant accepts of an MQTT sensor: its device classes, the
// units of each, and the state classes of each. These are facts read from
// Home Assistant's source (home-assistant/core), written here as data:
//
//   - homeassistant/components/sensor/const.py at commit
//     00eb6680fbf6bdf7af2499095f2e74fca980a148: SensorDeviceClass,
//     DEVICE_CLASS_UNITS, DEVICE_CLASS_STATE_CLASSES, SensorStateClass;
//   - homeassistant/const.py (dev, 2025.11 era: UnitOfConductivity's
//     deprecated aliases are there): the values of the UnitOf* enums and of
//     PERCENTAGE, LIGHT_LUX, DEGREE, CONCENTRATION_* and SIGNAL_STRENGTH_*.
//
// A device class Home Assistant does not know makes it drop the whole entity;
// a unit or state class the class does not allow is logged as an error
// against the entity. channels/mqtt/mqtttest/homeassistant.json holds the
// same facts for the discovery checker, and TestHomeAssistantFacts keeps the
// two equal.

// haNoUnit stands for Python's None in DEVICE_CLASS_UNITS: the class takes
// no unit of measurement.
const haNoUnit = ""

// Units of the UnitOf* enums of homeassistant/const.py.
var (
	haPressure     = []string{"Pa", "hPa", "kPa", "bar", "cbar", "mbar", "mmHg", "inHg", "psi"}
	haEnergy       = []string{"J", "kJ", "MJ", "GJ", "mWh", "Wh", "kWh", "MWh", "GWh", "TWh", "cal", "kcal", "Mcal", "Gcal"}
	haLength       = []string{"mm", "cm", "m", "km", "in", "ft", "yd", "mi", "nmi"}
	haVolume       = []string{"ft³", "CCF", "m³", "L", "mL", "gal", "fl. oz."}
	haSpeed        = []string{"Beaufort", "ft/s", "in/s", "m/s", "km/h", "kn", "mph", "mm/s"}
	haVolumetric   = []string{"in/d", "in/h", "mm/d", "mm/h"}
	haTemperature  = []string{"°C", "°F", "K"}
	haInformation  = []string{"bit", "kbit", "Mbit", "Gbit", "B", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	haDataRate     = []string{"bit/s", "kbit/s", "Mbit/s", "Gbit/s", "B/s", "kB/s", "MB/s", "GB/s", "KiB/s", "MiB/s", "GiB/s"}
	haMicrogramsM3 = []string{"µg/m³"}
)

// HASensorUnits is DEVICE_CLASS_UNITS: each sensor device class and the
// units Home Assistant accepts with it (haNoUnit: none). Every
// SensorDeviceClass is a key; monetary's unit is any ISO 4217 currency code
// (nil: not checked), and date, enum and timestamp take no unit.
var HASensorUnits = map[string][]string{
	"date": {haNoUnit}, "enum": {haNoUnit}, "timestamp": {haNoUnit},
	"apparent_power":                   {"VA"},
	"aqi":                              {haNoUnit},
	"area":                             {"m²", "cm²", "km²", "mm²", "in²", "ft²", "yd²", "mi²", "ac", "ha"},
	"atmospheric_pressure":             haPressure,
	"battery":                          {"%"},
	"blood_glucose_concentration":      {"mg/dL", "mmol/L"},
	"carbon_monoxide":                  {"ppm"},
	"carbon_dioxide":                   {"ppm"},
	"conductivity":                     {"S/cm", "µS/cm", "mS/cm"},
	"current":                          {"mA", "A"},
	"data_rate":                        haDataRate,
	"data_size":                        haInformation,
	"distance":                         haLength,
	"duration":                         {"d", "h", "min", "s", "ms"},
	"energy":                           haEnergy,
	"energy_distance":                  {"kWh/100km", "mi/kWh", "km/kWh"},
	"energy_storage":                   haEnergy,
	"frequency":                        {"Hz", "kHz", "MHz", "GHz"},
	"gas":                              {"CCF", "ft³", "m³"},
	"humidity":                         {"%"},
	"illuminance":                      {"lx"},
	"irradiance":                       {"W/m²", "BTU/(h⋅ft²)"},
	"moisture":                         {"%"},
	"monetary":                         nil,
	"nitrogen_dioxide":                 haMicrogramsM3,
	"nitrogen_monoxide":                haMicrogramsM3,
	"nitrous_oxide":                    haMicrogramsM3,
	"ozone":                            haMicrogramsM3,
	"ph":                               {haNoUnit},
	"pm1":                              haMicrogramsM3,
	"pm10":                             haMicrogramsM3,
	"pm25":                             haMicrogramsM3,
	"power_factor":                     {"%", haNoUnit},
	"power":                            {"W", "kW", "MW", "GW", "TW"},
	"precipitation":                    {"in", "mm", "cm"},
	"precipitation_intensity":          haVolumetric,
	"pressure":                         haPressure,
	"reactive_power":                   {"var"},
	"signal_strength":                  {"dB", "dBm"},
	"sound_pressure":                   {"dB", "dBA"},
	"speed":                            append(slices.Clone(haSpeed), haVolumetric...),
	"sulphur_dioxide":                  haMicrogramsM3,
	"temperature":                      haTemperature,
	"temperature_delta":                haTemperature,
	"volatile_organic_compounds":       haMicrogramsM3,
	"volatile_organic_compounds_parts": {"ppb", "ppm"},
	"voltage":                          {"µV", "mV", "V", "kV", "MV"},
	"volume":                           haVolume,
	"volume_flow_rate":                 {"m³/h", "m³/s", "ft³/min", "L/h", "L/min", "L/s", "gal/min", "mL/s"},
	"volume_storage":                   haVolume,
	"water":                            {"CCF", "ft³", "m³", "gal", "L"},
	"weight":                           {"g", "kg", "mg", "µg", "oz", "lb", "st"},
	"wind_direction":                   {"°"},
	"wind_speed":                       haSpeed,
}

// HABinarySensorDeviceClasses is BinarySensorDeviceClass
// (homeassistant/components/binary_sensor/__init__.py at commit
// 027590d94dd8effd8b68fef1d7ac9d8d10027eb6): the device classes an input
// pin, a binary_sensor in Home Assistant, may be given. Home Assistant's MQTT
// binary_sensor validates device_class against it (DEVICE_CLASSES_SCHEMA)
// and refuses the whole entity for any other.
var HABinarySensorDeviceClasses = []string{"battery", "battery_charging", "carbon_monoxide", "cold", "connectivity",
	"door", "garage_door", "gas", "heat", "light", "lock", "moisture", "motion", "moving", "occupancy", "opening",
	"plug", "power", "presence", "problem", "running", "safety", "smoke", "sound", "tamper", "update", "vibration", "window"}

// HASwitchDeviceClasses is SwitchDeviceClass
// (homeassistant/components/switch/__init__.py at commit
// 00f004ced5a97fc203773be50bf5df204586af72): the device classes an output
// pin, a switch in Home Assistant, may be given; MQTT's switch validates
// device_class against it the same way.
var HASwitchDeviceClasses = []string{"outlet", "switch"}

// knownDeviceClass reports whether dc is one of classes, Home Assistant's
// device classes of component; if it is not, the problem is reported at path
// with the nearest class, the likely meaning of a typo or an abbreviation.
// A class longer than any Home Assistant has is not matched (nearest's cost
// grows with its length): the message shows the first classes instead.
func (d *decoder) knownDeviceClass(path, component, dc string, classes []string) bool {
	if slices.Contains(classes, dc) {
		return true
	}
	classes = slices.Sorted(slices.Values(classes))
	if len(dc) > 32 {
		d.errf(path, "is not a Home Assistant %s device class (%s, ...)", component, strings.Join(classes[:min(3, len(classes))], ", "))
	} else {
		d.errf(path, "%s is not a Home Assistant %s device class; did you mean %s?", d.quote(path, dc), component, nearest(dc, classes))
	}
	return false
}

// haTextClasses are NON_NUMERIC_DEVICE_CLASSES: their state is a date, an
// option or a timestamp, never the number an mqtt sensor publishes.
var haTextClasses = []string{"date", "enum", "timestamp"}

// HAStateClasses is SensorStateClass.
var HAStateClasses = []string{"measurement", "total", "total_increasing"}

// HASensorStateClasses is DEVICE_CLASS_STATE_CLASSES: the state classes
// each sensor device class accepts (none for date, enum, timestamp and
// wind_direction). A sensor without a device class accepts any.
var HASensorStateClasses = map[string][]string{
	"apparent_power": {"measurement"}, "aqi": {"measurement"}, "area": HAStateClasses,
	"atmospheric_pressure": {"measurement"}, "battery": {"measurement"},
	"blood_glucose_concentration": {"measurement"}, "carbon_monoxide": {"measurement"},
	"carbon_dioxide": {"measurement"}, "conductivity": {"measurement"}, "current": {"measurement"},
	"data_rate": {"measurement"}, "data_size": HAStateClasses, "date": {}, "distance": HAStateClasses,
	"duration": HAStateClasses, "energy": {"total", "total_increasing"}, "energy_distance": {"measurement"},
	"energy_storage": {"measurement"}, "enum": {}, "frequency": {"measurement"},
	"gas": {"total", "total_increasing"}, "humidity": {"measurement"}, "illuminance": {"measurement"},
	"irradiance": {"measurement"}, "moisture": {"measurement"}, "monetary": {"total"},
	"nitrogen_dioxide": {"measurement"}, "nitrogen_monoxide": {"measurement"},
	"nitrous_oxide": {"measurement"}, "ozone": {"measurement"}, "ph": {"measurement"},
	"pm1": {"measurement"}, "pm10": {"measurement"}, "pm25": {"measurement"},
	"power_factor": {"measurement"}, "power": {"measurement"}, "precipitation": HAStateClasses,
	"precipitation_intensity": {"measurement"}, "pressure": {"measurement"},
	"reactive_power": {"measurement"}, "signal_strength": {"measurement"},
	"sound_pressure": {"measurement"}, "speed": {"measurement"}, "sulphur_dioxide": {"measurement"},
	"temperature": {"measurement"}, "temperature_delta": {"measurement"}, "timestamp": {},
	"volatile_organic_compounds": {"measurement"}, "volatile_organic_compounds_parts": {"measurement"},
	"voltage": {"measurement"}, "volume": {"total", "total_increasing"}, "volume_storage": {"measurement"},
	"volume_flow_rate": {"measurement"}, "water": {"total", "total_increasing"},
	"weight": HAStateClasses, "wind_direction": {}, "wind_speed": {"measurement"},
}

// DefaultStateClass is the state class a sensor of deviceClass gets when
// its configuration names none: measurement where Home Assistant accepts it
// (and with no device class), else none ("") — an energy meter, say, must
// choose total or total_increasing itself.
func DefaultStateClass(deviceClass string) string {
	if deviceClass == "" || slices.Contains(HASensorStateClasses[deviceClass], "measurement") {
		return "measurement"
	}
	return ""
}

// nearest is the word of words that w most likely meant: the shortest one
// that w begins (an abbreviation: temp, temperature), else the closest by
// Levenshtein distance, ties broken alphabetically (a typo).
func nearest(w string, words []string) string {
	w = strings.ToLower(w)
	words = slices.Clone(words)
	sort.Strings(words)
	best, bestD := "", -1
	for _, c := range words {
		if strings.HasPrefix(c, w) && (best == "" || !strings.HasPrefix(best, w) || len(c) < len(best)) {
			best, bestD = c, 0
		}
	}
	if best != "" {
		return best
	}
	for _, c := range words {
		if d := editDistance(w, c); bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes. Its inputs
// are bounded by the caller (a device class is at most 32 bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// unitList names the units of a class for an error message.
func unitList(units []string) string {
	var out []string
	for _, u := range units {
		if u == haNoUnit {
			out = append(out, "none")
		} else {
			out = append(out, u)
		}
	}
	return strings.Join(out, ", ")
}
