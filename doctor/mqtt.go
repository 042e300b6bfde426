package doctor

import (
	"errors"
	"time"

	"github.com/clawedge/clawedge/channels/mqtt"
	"github.com/clawedge/clawedge/config"
)

// MQTT is doctor's line for MQTT: one connection with the configured
// login and TLS settings. Neither the password nor any part of it is printed:
// the broker's refusal ("not authorized") says what is wrong.
func MQTT(cfg *config.Config) Check {
	mc := cfg.MQTT
	c := Check{What: "mqtt"}
	err := mqtt.Check(mqtt.Options{Broker: mc.Broker, CAFile: mc.CAFile, Username: mc.Username,
		Password: mc.Password.Reveal()}, 5*time.Second)
	switch {
	case err == nil:
		c.OK, c.Info = true, "connected to "+mc.Broker
		if mc.Username != "" {
			c.Info += " as " + mc.Username
		}
	case errors.Is(err, mqtt.ErrLoginRefused):
		c.Info = mc.Broker + " refused the login (" + err.Error() + ")"
		c.Fix = "check mqtt.username and the password (mqtt.password, usually ${MQTT_PASSWORD}) against the broker's users"
	default:
		// Offline is a state a board may be in; the daemon keeps retrying.
		c.OK, c.Warn = true, true
		c.Info = "cannot reach " + mc.Broker + " now: " + err.Error()
		c.Fix = "check the network, mqtt.broker and (mqtts) mqtt.ca_file; clawedge run keeps retrying by itself"
	}
	return c
}
