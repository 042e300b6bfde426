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
	Env      []string `yaml:"env"`
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
	// Source is the file the configuration came from, "" for the
	// built-in defaults. It is not a key: it is set by Parse and Load.
	Source string `yaml:"-"`
}

// Board describes the hardware the tools may touch. Deny by default: a
// pin, port or bus that is not listed here cannot be used at all.
type Board struct {
	// Driver is "sim" (the simulated board, usable anywhere) or "periph"
	// (real hardware through the Linux character devices).
	Driver string          `yaml:"driver"`
	Pins   map[string]Pin  `yaml:"pins"`
	Ports  map[string]Port `yaml:"ports"`
	Buses  map[string]Bus  `yaml:"buses"`
}

// Pin is one GPIO line, named so that tools and people refer to "relay",
// not to a BCM number they could mistype.
type Pin struct {
	GPIO int    `yaml:"gpio"`
	Mode string `yaml:"mode"` // in | out
	// Pull and Edge apply to inputs only ("none" when unset); they are
	// empty for outputs.
	Pull string `yaml:"pull"` // none | up | down
	Edge string `yaml:"edge"` // none | rising | falling | both
	// ActiveLow inverts the logical level: "on" drives the line low. Most
	// cheap relay boards are active low.
	ActiveLow bool `yaml:"active_low"`
	// Initial and Safe apply to outputs only ("low" when unset); they are
	// empty for inputs. Safe is the level the board returns the pin to
	// on shutdown and when MaxOn expires.
	Initial string `yaml:"initial"` // low | high
	Safe    string `yaml:"safe"`    // low | high
	// MaxOn bounds how long an output may stay away from its safe level;
	// zero means no bound. It exists so that a wedged agent cannot leave
	// a heater or a garage door motor running.
	MaxOn Duration `yaml:"max_on"`
}

// Port is a serial device the serial tools may open.
type Port struct {
	Device string `yaml:"device"`
	Baud   int    `yaml:"baud"`
}

// Bus is an I2C bus the i2c tools may use.
type Bus struct {
	// I2C is the bus number ("1") or the device path ("/dev/i2c-1").
	I2C string `yaml:"i2c"`
}

// Console configures the local operator channels.
type Console struct {
	// Stdin enables the chat on standard input; nil means true. It is a
	// pointer so that "stdin: false" in a file can be told from absence.
	Stdin  *bool          `yaml:"stdin"`
	Serial *SerialConsole `yaml:"serial"`
}

// SerialConsole is a serial line that behaves like the stdin console, for
// headless boards reached through a USB-serial cable.
type SerialConsole struct {
	Device string `yaml:"device"`
	Baud   int    `yaml:"baud"`
}

// Telegram configures the Telegram channel. It is off while Token is empty.
type Telegram struct {
	Token Secret `yaml:"token"`
	// APIURL is configurable so that tests can point the client at a fake
	// Bot API server, and so that users can use a self-hosted one.
	APIURL string `yaml:"api_url"`
	// AllowUsers are the numeric Telegram user ids that may talk to the
	// agent. Everybody else gets nothing (deny by default).
	AllowUsers []int64 `yaml:"allow_users"`
	// Pairing lets an unknown user ask to be added, confirmed on the
	// console; it never grants access by itself.
	Pairing bool `yaml:"pairing"`
	// AllowChats are the group chat ids (negative numbers) where the bot
	// answers; in them only messages that mention the bot or reply to it
	// count. Groups not listed are ignored.
	AllowChats []int64 `yaml:"allow_chats"`
	// Notify sends a message to chosen users when an input pin changes
	// ("button pressed at 14:02").
	Notify []Notify `yaml:"notify"`
}

// Notify is one pin-edge event sent over Telegram.
type Notify struct {
	// Pin is a configured input pin with edge detection.
	Pin string `yaml:"pin"`
	// Edge is the change that notifies: rising, falling or both (in
	// logical levels). Empty means the pin's own edge setting.
	Edge string `yaml:"edge"`
	// Users receive the message; empty means every allow_users id. Each
	// must be in allow_users: board events do not go to strangers.
	Users []int64 `yaml:"users"`
	// Text starts the message, " at 15:04" is added; empty means
	// "<pin> rising" / "<pin> falling".
	Text string `yaml:"text"`
}

// Models configures the local model, the remote providers and the router
// that chooses between them.
type Models struct {
	Local  *LocalModel   `yaml:"local"`
	Remote []RemoteModel `yaml:"remote"`
	Router Router        `yaml:"router"`
}

// LocalModel is a GGUF file run by clawedge-llm.
type LocalModel struct {
	Path    string `yaml:"path"`
	Threads int    `yaml:"threads"`
	Context int    `yaml:"context"`
	// Template names the chat format (qwen2, qwen2.5 or qwen3) when the
	// model file's own chat template is missing or not recognized; empty
	// means the file decides.
	Template string `yaml:"template"`
	// IdleUnload stops the runner, and so frees the model's memory, after
	// this long without a request; 0 keeps it loaded.
	IdleUnload Duration `yaml:"idle_unload"`
	// Quality and Speed are the router's scores for this model, from 1
	// to 10 (10 best); 5 when unset. The local model costs nothing.
	Quality float64 `yaml:"quality"`
	Speed   float64 `yaml:"speed"`
}

// RemoteModel is one remote provider endpoint.
type RemoteModel struct {
	// Name is how routes, stats, logs and models.router.order refer to
	// it; "local" is the local model's.
	Name string `yaml:"name"`
	Kind string `yaml:"kind"` // openai | anthropic
	// BaseURL is required for openai (there is no one server: Ollama,
	// llama-server, vLLM...); for anthropic it defaults to the public API.
	BaseURL string `yaml:"base_url"`
	Model   string `yaml:"model"`
	APIKey  Secret `yaml:"api_key"`
	// Context is the model's window in tokens; 0 (unset) means unknown,
	// and the router then leaves it to the server to refuse a prompt too
	// long.
	Context int `yaml:"context"`
	// CostIn and CostOut are what 1,000 prompt and reply tokens cost, in
	// any currency unit the user likes; replies report their cost in it.
	CostIn  float64 `yaml:"cost_in"`
	CostOut float64 `yaml:"cost_out"`
	// Quality and Speed are the router's scores, from 1 to 10 (10 best);
	// 5 when unset.
	Quality float64 `yaml:"quality"`
	Speed   float64 `yaml:"speed"`
	// Tools says whether the model gets tool definitions (default true);
	// false keeps turns that need tools away from it.
	Tools bool `yaml:"tools"`
	// Constraint is how an openai server is asked to constrain its reply
	// to the allowed calls: none, gbnf (llama-server's grammar),
	// json_schema (response_format) or ollama (Ollama's format); empty
	// lets the provider choose. Anthropic takes no constraint.
	Constraint string `yaml:"constraint"`
	// Timeout bounds one call; 0 (unset) is the provider's default.
	Timeout Duration `yaml:"timeout"`
	// Temperature is sent with every request (default 0.7; 0 is greedy);
	// Seed, when set, too (kind openai only), for replies that can be
	// reproduced where the server honours it.
	Temperature float64 `yaml:"temperature"`
	Seed        uint64  `yaml:"seed"`
}

// Router picks the model for a turn.
type Router struct {
	Strategy string `yaml:"strategy"`
	// Order is the fallback order by model name ("local" or a remote's
	// name); models not listed follow in the order they are configured.
	Order []string `yaml:"order"`
	// LocalQueueBudget is how long a turn waits for the local model while
	// it serves another before going to a remote one; 0 waits.
	LocalQueueBudget Duration `yaml:"local_queue_budget"`
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

// Defaults that apply inside sections a file introduces.
const (
	defaultDataDir    = "./data"
	defaultDriver     = "sim"
	defaultAPIURL     = "https://api.telegram.org"
	defaultStrategy   = "local-first"
	defaultThreads    = 4
	defaultContext    = 4096
	defaultBaud       = 115200
	defaultPull       = "none"
	defaultEdge       = "none"
	defaultLevel      = "low"
	defaultRelayMaxOn = Duration(10 * time.Minute)
	defaultIdleUnload = Duration(10 * time.Minute)
	defaultScore      = 5
	// defaultTemperature is what remote models are sampled at unless the
	// config says otherwise: Qwen2.5's recommended value, as the local model.
	defaultTemperature = 0.7
	anthropicURL       = "https://api.anthropic.com"
)

// Default returns the configuration clawedge runs with when there is no
// file: the simulated board with an LED, a button and a relay, so that
// every tool can be tried on a laptop. Each call returns fresh maps.
func Default() *Config {
	stdin := true
	return &Config{
		DataDir: defaultDataDir,
		Board: Board{
			Driver: defaultDriver,
			Pins: map[string]Pin{
				"led":    {GPIO: 17, Mode: "out", Initial: defaultLevel, Safe: defaultLevel},
				"button": {GPIO: 27, Mode: "in", Pull: "up", Edge: "both"},
				"relay": {GPIO: 22, Mode: "out", ActiveLow: true, Initial: defaultLevel,
					Safe: defaultLevel, MaxOn: defaultRelayMaxOn},
			},
		},
		Console:  Console{Stdin: &stdin},
		Telegram: Telegram{APIURL: defaultAPIURL},
		Models:   Models{Router: Router{Strategy: defaultStrategy}},
		Policy:   defaultPolicy(),
		Agent:    defaultAgent(),
		Exec:     defaultExec(),
		Secrets:  Secrets{Key: "device"},

		AutomationBudget: defaultBudget(),
	}
}

// ConsoleStdin reports whether the stdin chat is enabled (the default).
func (c *Config) ConsoleStdin() bool {
	return c.Console.Stdin == nil || *c.Console.Stdin
}
