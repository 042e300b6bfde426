package daemon

import (
	"cmp"
	"fmt"
	"github.com/clawedge/clawedge/boards"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/mqtt"
	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/periph"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/peripherals"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/tools/sys"
)

// app is everything a command needs, assembled in one place so that run, chat
// and exec behave identically.
type Core struct {
	// listing: the tools are only listed (clawedge tools), never run, so
	// the ones a store would serve are listed without one, as help lists them.
	listing bool
	version string
	opt     Options
	cfg     *config.Config
	log     *slog.Logger
	store   *store.Store
	board   *hal.Board
	reg     *tools.Registry
	runner  *tools.Runner
	auth    *policy.Authorizer // the one place that decides who may call (policycmd.go)
	pol     *policy.Policy
	started time.Time
	local   *localmodel.Client // the local model's runner client, when models.local is set
	router  *router.Router     // over the configured models, when there is one
	agent   *agent.Agent       // the agent loop, when a model is configured
	serving bool               // the daemon: approvals are announced on its stdout
	mqttPub *mqtt.PublishTool  // mqtt/publish, bound to the channel by serveMQTT (mqtt.go)
	mqttCh  *mqtt.Channel      // the running channel, for automations' mqtt triggers
	// lost gets the store's error when its file was removed or replaced under
	// us (store.Options.Lost): the daemon stops rather than write into it.
	lost chan error
	// autoTools are the auto/* tools' link to the scheduler (automations.go).
	autoTools automations.Handle
	// goalTools are the goal/* tools' link to the goal runtime (goals.go).
	goalTools goals.Handle
	goals     *goals.Runtime
	// feed tells waiting goals of what their checks read: pin edges
	// (goals.go) and sensor samples (sensors.go).
	feed *goals.Feed
	// sensors are board.sensors, opened on the board; history keeps their
	// samples in the store (nil without a store: a Listing).
	sensors *sensors.Set
	history *store.History
	samples sampleBoard  // the sampler's last sample of each sensor, followed by MQTT (sensors.go)
	remote  llm.Provider // the first models.remote entry: goals' judge and escalation
	// boards is this board among others (boards.go); nil: no boards section.
	boards     *boards.Service
	boardTools boards.Tools
	// webSessions are the dashboard's paired browsers (web.go); nil: no dashboard.
	webSessions *web.Sessions
	pairSink    PairingSink // the first pairing code's (first_pairing.go); nil: none
	// The setup page (web_setup.go): its facts, and the restart it asks for.
	setupFacts web.SetupFacts
	restartMu  sync.Mutex
	stopServe  func(error) // Serve's stop; nil: not serving
	restartTo  string
	sched      *automations.Scheduler
	// tell is who automations, goals and the daemon tell things to: nobody
	// but the log until Serve wires the consoles and Telegram in.
	tell *people
	mem  *memory.Workspace // the workspace, when memory.enabled (memorycmd.go)
	// The installed skills, loaded once (skills.go), and why others were not.
	skillsLoaded bool
	skillList    []*skills.Skill
	skillErrs    []error
}

// Options are the facts a Core is opened with that are not in the config.
type Options struct {
	Version string       // this build's, as sys/status and the consoles say it
	Log     *slog.Logger // nil: slog's default
	// UpdateStatus describes this board's A/B slots for "update status" at a
	// console (the update commands know where the slots are); nil: no slots.
	UpdateStatus func() (string, error)
	// UpdateReport is a failed update's message from clawedge-init, told
	// once the daemon is ready; "": none.
	UpdateReport string
	// Findings are doctor's checks that make sense inside the daemon, for
	// the dashboard's overview; nil: none.
	Findings func(*config.Config) []web.Finding
	// Sim makes the simulated board's driver (board.driver: sim); nil:
	// hal/sim's. Tests keep a handle on the pins through it.
	Sim func() hal.Driver
	// Listing: the tools are only listed (clawedge tools, policy explain),
	// never run, on a simulated board and without a store.
	Listing bool
	// FirstPairing receives the dashboard's first pairing code while no
	// browser is paired (first_pairing.go); nil: clawedge-init's boot
	// partition on the SD image, else none.
	FirstPairing PairingSink
	// Setup makes the dashboard's setup page and its tools (the setup
	// package, above this one; web_setup.go); nil: no setup page.
	Setup SetupFunc
}

// Open opens the one Core of cfg: the store, the board, the registry with
// every tool, the policy, the authorizer and the runner. Every command that
// acts without a daemon, and the daemon itself, build it this one way.
func Open(cfg *config.Config, opt Options) (*Core, error) {
	a := newCore(cfg, opt)
	var err error
	a.lost = make(chan error, 1)
	a.store, err = store.Open(cfg.DataDir, store.Options{Timeout: time.Second,
		Warn: func(msg string) { a.log.Error(msg) },
		Lost: func(err error) {
			a.log.Error("STORE LOST: " + err.Error())
			a.lost <- err
		}})
	if err != nil {
		return nil, err
	}
	// How much the store keeps (docs/install.md, "Storage"); the daemon's
	// Maintain keeps it, every other command only writes within it.
	a.store.SetRetention(RetentionOf(cfg)) // storeusage.go
	a.openWebSessions()                    // web.go: before the tools, web/pair issues their codes
	a.pairSink = pairingSink(opt)          // first_pairing.go
	if a.board, err = OpenBoard(cfg, opt.Sim); err != nil {
		a.store.Close()
		return nil, err
	}
	if err := a.registerTools(); err != nil {
		a.Close()
		return nil, err
	}
	env := map[string]string{}
	for _, name := range cfg.Env {
		if v, ok := os.LookupEnv(name); ok {
			env[name] = v
		}
	}
	host, _ := os.Hostname()
	a.runner = &tools.Runner{Registry: a.reg, Audit: a.store, Env: env, Authorizer: a.authorizer(), Self: map[string]grammar.Value{
		"name":    grammar.StringValue(host),
		"version": grammar.StringValue(a.version),
		"board":   grammar.StringValue(a.board.Driver()),
	}}
	if err := a.openBoards(); err != nil { // boards.go
		a.Close()
		return nil, err
	}
	return a, nil
}

func (a *Core) registerTools() error {
	a.reg = tools.NewRegistry()
	if err := peripherals.Register(a.reg, a.board); err != nil {
		return err
	}
	if a.cfg.MQTT != nil {
		a.mqttPub = &mqtt.PublishTool{}
		if err := a.reg.Register(a.mqttPub); err != nil {
			return err
		}
	}
	if err := a.registerExec(); err != nil { // sysexec.go
		return err
	}
	if err := a.registerUpdateTools(); err != nil { // update_request.go
		return err
	}
	if err := a.registerSensors(); err != nil { // sensors.go
		return err
	}
	if a.cfg.Web != nil {
		if err := web.RegisterTools(a.reg, a.webSessions); err != nil {
			return err
		}
	}
	if err := a.registerBoardTools(); err != nil { // boards.go
		return err
	}
	if err := automations.RegisterTools(a.reg, &a.autoTools); err != nil {
		return err
	}
	if err := goals.RegisterTools(a.reg, &a.goalTools); err != nil {
		return err
	}
	if a.cfg.Memory.Enabled {
		var err error
		if a.mem, err = OpenWorkspace(a.cfg); err != nil {
			return err
		}
		if err := memory.Register(a.reg, a.mem); err != nil {
			return err
		}
	}
	if err := a.registerSkills(); err != nil { // skills.go
		return err
	}
	if err := a.registerSetup(); err != nil { // web_setup.go
		return err
	}
	info := sys.Info{Version: a.version, Started: a.started, Facts: a.facts}
	if a.store != nil || a.listing {
		info.Audit = a.auditTail
	}
	return sys.Register(a.reg, info)
}

func (a *Core) auditTail(n int) ([]string, error) {
	entries, err := a.store.Tail(n)
	if err != nil {
		return nil, err
	}
	return EntryLines(entries), nil
}

// facts are the board and store lines of sys/status.
func (a *Core) facts() []sys.Fact {
	facts := []sys.Fact{
		{Key: "board", Value: grammar.StringValue(a.board.Driver())},
		{Key: "pins", Value: grammar.IntValue(int64(len(a.board.Pins())))},
		{Key: "ports", Value: grammar.IntValue(int64(len(a.board.Ports())))},
		{Key: "tools", Value: grammar.IntValue(int64(len(a.reg.Specs())))},
	}
	if a.cfg != nil {
		wifi, _ := WiFiInfo(a.cfg.Network) // wifi.go
		facts = append(facts, sys.Fact{Key: "wifi", Value: grammar.StringValue(wifi)})
	}
	if a.local != nil {
		// The local model's speed on this board, from its last reply.
		speed := "no reply yet"
		if f := a.local.LastReply(); f != nil {
			speed = "last reply: " + f.Speed()
		}
		facts = append(facts, sys.Fact{Key: "local_model", Value: grammar.StringValue(filepath.Base(a.cfg.Models.Local.Path) + ", " + speed)})
	}
	if a.store == nil {
		return facts
	}
	if st, err := a.store.Stats(); err == nil {
		facts = append(facts,
			sys.Fact{Key: "store", Value: grammar.StringValue(a.store.Path())},
			sys.Fact{Key: "audit_entries", Value: grammar.IntValue(int64(st.AuditEntries))})
	}
	if u, err := a.store.Usage(); err == nil {
		facts = append(facts, sys.Fact{Key: "store_use", Value: grammar.StringValue(UsageLine(u))}) // storeusage.go
	}
	return facts
}

// close returns outputs to their safe levels and closes the store, in that order,
// so the last audit outcome is written before the file closes.
func (a *Core) Close() {
	a.saveTotals()
	if a.local != nil {
		a.local.Close()
	}
	if a.board != nil {
		if err := a.board.Close(); err != nil {
			a.log.Error("board close", "err", err)
		}
	}
	if a.store != nil {
		a.store.Close()
	}
}

// newCore is a Core of cfg with nothing opened yet.
func newCore(cfg *config.Config, opt Options) *Core {
	if opt.Log == nil {
		opt.Log = slog.Default()
	}
	return &Core{cfg: cfg, opt: opt, version: opt.Version, log: opt.Log, started: time.Now(), listing: opt.Listing, tell: &people{log: opt.Log}, feed: &goals.Feed{}}
}

// OpenBoard maps the config's board section onto hal and opens the driver it
// names; newSim makes the simulated one (nil: hal/sim's).
func OpenBoard(cfg *config.Config, newSim func() hal.Driver) (*hal.Board, error) {
	if newSim == nil {
		newSim = func() hal.Driver { return sim.New() }
	}
	hc, err := halConfig(cfg.Board)
	if err != nil {
		return nil, err
	}
	var drv hal.Driver
	switch cfg.Board.Driver {
	case "", "sim":
		drv = newSim()
	case "periph":
		drv = periph.New(periph.Options{})
	default:
		return nil, fmt.Errorf("board.driver %q: want sim or periph", cfg.Board.Driver)
	}
	b, err := hal.Open(drv, hc)
	if err != nil {
		drv.Close()
		return nil, err
	}
	return b, nil
}

func halConfig(b config.Board) (hal.Config, error) {
	var hc hal.Config
	for _, name := range slices.Sorted(maps.Keys(b.Pins)) {
		p := b.Pins[name]
		pc := hal.PinConfig{
			Name: name, GPIO: p.GPIO, Mode: hal.Mode(p.Mode), Pull: hal.Pull(cmp.Or(p.Pull, "none")),
			Edge: hal.Edge(cmp.Or(p.Edge, "none")), ActiveLow: p.ActiveLow, MaxOn: time.Duration(p.MaxOn),
		}
		var err error
		if pc.Initial, err = hal.ParseLevel(cmp.Or(p.Initial, "low")); err != nil {
			return hc, fmt.Errorf("board.pins.%s.initial: %w", name, err)
		}
		if pc.Safe, err = hal.ParseLevel(cmp.Or(p.Safe, "low")); err != nil {
			return hc, fmt.Errorf("board.pins.%s.safe: %w", name, err)
		}
		hc.Pins = append(hc.Pins, pc)
	}
	for _, name := range slices.Sorted(maps.Keys(b.Ports)) {
		p := b.Ports[name]
		hc.Ports = append(hc.Ports, hal.PortConfig{Name: name, Device: p.Device, Baud: p.Baud})
	}
	for _, name := range slices.Sorted(maps.Keys(b.Buses)) {
		if ow := b.Buses[name].OneWire; ow != "" {
			hc.OneWire = append(hc.OneWire, hal.OneWireConfig{Name: name, Bus: ow})
			continue
		}
		hc.Buses = append(hc.Buses, hal.BusConfig{Name: name, Bus: b.Buses[name].I2C})
	}
	for _, name := range slices.Sorted(maps.Keys(b.SPI)) {
		s := b.SPI[name]
		hc.SPI = append(hc.SPI, hal.SPIConfig{Name: name, Dev: s.Dev, Hz: int64(s.Hz), Mode: s.Mode})
	}
	return hc, nil
}

// Listing is the Core whose registry that the config would have, without touching
// hardware: the pins are opened on a simulated board, since tool specs depend
// only on the configured names and modes, and the board is closed again. This
// lets `tools` and `parse` run beside a daemon that holds the real GPIO lines.
// The registry is for its specs only: its tools must not be run.
func Listing(cfg *config.Config, opt Options) (*Core, error) {
	hc, err := halConfig(cfg.Board)
	if err != nil {
		return nil, err
	}
	b, err := hal.Open(sim.New(), hc)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	opt.Listing = true
	a := newCore(cfg, opt)
	a.board = b
	if err := a.registerTools(); err != nil {
		return nil, err
	}
	return a, nil
}

// ControlPath is where the daemon of cfg serves its control socket.
func ControlPath(cfg *config.Config) string {
	return filepath.Join(cfg.DataDir, channels.ControlSocketName)
}
