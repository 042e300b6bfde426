// Package config reads clawedge's YAML configuration: the schema, the
// built-in defaults, ${VAR} expansion from the environment and validation.
//
// The key names are a contract (README.md, "Config reference"): users'
// files and other packages' tests rely on them, so they change only with a
// migration. Parsing is strict — an unknown key or a value of the wrong type
// is an error naming file, line and column — because a typo in a pin table
// must not silently leave a relay without its max_on guard.
package config

import (
	"strings"
	"time"
)

// Config is the effective configuration: the built-in defaults with a
// file's values laid over them. Parse and Load return it only when it is
// valid, so consumers need not re-check what validation already guarantees.
type Config struct {
	// DataDir holds the store, downloaded models and the audit log.
	DataDir string `yaml:"data_dir"`
	// Env lists the environment variable names that the command
	// language's $env.NAME may read; nothing else is readable. It is an
	// allow list because the model can be asked to emit $env references
	// too, and the process environment usually carries secrets.
	Env []string `yaml:"env"`
	// Board, Console, Telegram and Models are each in the file of their name
	// (type, defaults, decoding, validation, writing), as are the sections below.
	Board    Board    `yaml:"board"`
	Console  Console  `yaml:"console"`
	Telegram Telegram `yaml:"telegram"`
	Models   Models   `yaml:"models"`
	// Policy and Agent are in policy.go: what the agent's calls may do, and the
	// limits of its turns.
	Policy Policy `yaml:"policy"`
	Agent  Agent  `yaml:"agent"`
	// Timezone, Location, AutomationBudget and Automations are in automations.go.
	Timezone         string                `yaml:"timezone"`
	Location         *Location             `yaml:"location"`
	AutomationBudget AutomationBudget      `yaml:"automation_budget"`
	Automations      map[string]Automation `yaml:"automations"`
	// MQTT is in mqtt.go; nil: off.
	MQTT *MQTT `yaml:"mqtt"`
	// Metrics is in metrics.go; nil: off.
	Metrics *Metrics `yaml:"metrics"`
	// Web is in web.go; nil: off.
	Web *Web `yaml:"web"`
	// Boards is in boards.go; nil: off.
	Boards *Boards `yaml:"boards"`
	// Store is in store.go: how much the store keeps.
	Store Store `yaml:"store"`
	// Update is in update.go; nil: only the image's key is trusted.
	Update *Update `yaml:"update"`
	// Network is in network.go: the Wi-Fi networks of the SD card image.
	Network Network `yaml:"network"`
	// Exec is in exec.go: the sys/exec tool and its sandbox.
	Exec Exec `yaml:"exec"`
	// Secrets is in secrets.go: the key of the secret store.
	Secrets Secrets `yaml:"secrets"`
	// MCP is in mcp.go; nil: off.
	MCP *MCP `yaml:"mcp"`
	// Memory is in memory.go: the workspace (persona, people, long-term memory).
	Memory Memory `yaml:"memory"`
	// Goals is in goals.go: how goals are pursued.
	Goals Goals `yaml:"goals"`
	// Skills is in skills.go: which skills install and load.
	Skills Skills `yaml:"skills"`
	// Source is the file the configuration came from, "" for the
	// built-in defaults. It is not a key: it is set by Parse and Load.
	Source string `yaml:"-"`
}

// Duration is a time.Duration written the way people write it in YAML:
// "10m", "1h30m", "500ms".
type Duration time.Duration

// String formats d without the zero units time.Duration prints ("10m",
// not "10m0s"), so Redacted output reads like what the user wrote.
func (d Duration) String() string {
	s := time.Duration(d).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// MarshalYAML writes the duration as a string, for code that marshals a
// Config directly rather than through Redacted.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// defaultDataDir is data_dir when the file does not set it.
const defaultDataDir = "./data"

// Default returns the configuration clawedge runs with when there is no
// file: the simulated board with an LED, a button and a relay, so that
// every tool can be tried on a laptop. Each call returns fresh maps.
// Builtin is the config clawedge runs on when no file is found
// (./scripts/run-sim.sh): the defaults, on the simulated board, with a
// simulated BME280 (greenhouse) on an I²C bus, so the sensor tools have
// something to read. A file starts from Default, without it.
func Builtin() *Config {
	c := Default()
	c.Board.Buses = map[string]Bus{"sensors": {I2C: "1"}}
	c.Board.Sensors = map[string]Sensor{"greenhouse": {Driver: "bme280", Bus: "sensors", Address: 0x76, Every: Duration(30 * time.Second),
		Sim: map[string]float64{"temperature": 21.5, "humidity": 40, "pressure": 1013.2}}}
	return c
}

func Default() *Config {
	return &Config{
		DataDir:  defaultDataDir,
		Board:    defaultBoard(),
		Console:  defaultConsole(),
		Telegram: defaultTelegram(),
		Models:   defaultModels(),
		Policy:   defaultPolicy(),
		Agent:    defaultAgent(),
		Exec:     defaultExec(),
		Secrets:  Secrets{Key: "device"},
		Memory:   defaultMemory(),
		Goals:    defaultGoals(),

		AutomationBudget: defaultBudget(),
	}
}
