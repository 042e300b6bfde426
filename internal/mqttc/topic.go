package mqttc

import "strings"

// Match reports whether topic matches the subscription filter, with MQTT's
// wildcards: + one level, # the rest (and the parent level). Wildcards at
// the first level do not match topics starting with $ (the broker's).
func Match(filter, topic string) bool {
	if strings.HasPrefix(topic, "$") && (strings.HasPrefix(filter, "+") || strings.HasPrefix(filter, "#")) {
		return false
	}
	fs, ts := strings.Split(filter, "/"), strings.Split(topic, "/")
	for i, f := range fs {
		if f == "#" {
			return i == len(fs)-1
		}
		if i >= len(ts) || (f != "+" && f != ts[i]) {
			return false
		}
	}
	return len(fs) == len(ts)
}
