package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/automations"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/mqtt"
	"github.com/clawedge/clawedge/channels/telegram"
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
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/tools/sys"
)

// app is everything a command needs, assembled in one place so that run, chat
// and exec behave identically.
type app struct {
	// listing: the tools are only listed (clawedge tools), never run, so
	// the ones a store would serve are listed without one, as help lists them.
	listing bool
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
	remote    llm.Provider // the first models.remote entry: goals' judge and escalation
	// webSessions are the dashboard's paired browsers (web.go); nil: no dashboard.
	webSessions *web.Sessions
	sched       *automations.Scheduler
	tg          *telegram.Channel // the Telegram channel, when it runs (automation notify)
	mem         *memory.Workspace // the workspace, when memory.enabled (memorycmd.go)
	// The installed skills, loaded once (skills.go), and why others were not.
	skillsLoaded bool
	skillList    []*skills.Skill
	skillErrs    []error
}

// loadConfig finds and loads the config the way every command does.
func loadConfig(g *globalFlags) (*config.Config, error) {
	return loadConfigFile(g, loadWithSecrets) // secret.go
}

// loadConfigFile finds the config file and loads it with load; with none, the
// built-in defaults.
func loadConfigFile(g *globalFlags, load func(path string) (*config.Config, error)) (*config.Config, error) {
	path := g.config
	if path == "" {
		var err error
		if path, err = config.Find(); err != nil {
			return nil, err
		}
	}
	if path == "" {
		return config.Default(), nil
	}
	return load(path)
}

func newLogger(g *globalFlags, def slog.Level) *slog.Logger {
	level := def
	if g.logLevel != "" {
		if err := level.UnmarshalText([]byte(g.logLevel)); err != nil {
			level = def
		}
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// openApp opens the store and the board of cfg and registers the tools.
func openApp(cfg *config.Config, g *globalFlags, logLevel slog.Level) (*app, error) {
	a := &app{cfg: cfg, log: newLogger(g, logLevel), started: time.Now()}
	slog.SetDefault(a.log)
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
	a.store.SetRetention(retentionOf(cfg)) // storeusage.go
	if a.board, err = openBoard(cfg); err != nil {
		a.store.Close()
		return nil, err
	}
	if err := a.registerTools(); err != nil {
		a.close()
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
		"version": grammar.StringValue(version),
		"board":   grammar.StringValue(a.board.Driver()),
	}}
	return a, nil
}

func (a *app) registerTools() error {
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
	if err := automations.RegisterTools(a.reg, &a.autoTools); err != nil {
		return err
	}
	if err := goals.RegisterTools(a.reg, &a.goalTools); err != nil {
		return err
	}
	if a.cfg.Memory.Enabled {
		var err error
		if a.mem, err = openWorkspace(a.cfg); err != nil {
			return err
		}
		if err := memory.Register(a.reg, a.mem); err != nil {
			return err
		}
	}
	if err := a.registerSkills(); err != nil { // skills.go
		return err
	}
	info := sys.Info{Version: version, Started: a.started, Facts: a.facts}
	if a.store != nil || a.listing {
		info.Audit = a.auditTail
	}
	return sys.Register(a.reg, info)
}

func (a *app) auditTail(n int) ([]string, error) {
	entries, err := a.store.Tail(n)
	if err != nil {
		return nil, err
	}
	return entryLines(entries), nil
}

// facts are the board and store lines of sys/status.
func (a *app) facts() []sys.Fact {
	facts := []sys.Fact{
		{Key: "board", Value: grammar.StringValue(a.board.Driver())},
		{Key: "pins", Value: grammar.IntValue(int64(len(a.board.Pins())))},
		{Key: "ports", Value: grammar.IntValue(int64(len(a.board.Ports())))},
		{Key: "tools", Value: grammar.IntValue(int64(len(a.reg.Specs())))},
	}
	if a.cfg != nil {
		wifi, _ := wifiInfo(a.cfg.Network) // wifi.go
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
		facts = append(facts, sys.Fact{Key: "store_use", Value: grammar.StringValue(usageLine(u))}) // storeusage.go
	}
	return facts
}

// close returns outputs to their safe levels and closes the store, in that order,
// so the last audit outcome is written before the file closes.
func (a *app) close() {
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

// newSim makes the simulated board; tests replace it to keep a handle on the
// simulated pins and check their electrical levels.
var newSim = func() hal.Driver { return sim.New() }

// openBoard maps the config's board section onto hal and opens the driver it names.
func openBoard(cfg *config.Config) (*hal.Board, error) {
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
	for _, name := range sortedKeys(b.Pins) {
		p := b.Pins[name]
		pc := hal.PinConfig{
			Name: name, GPIO: p.GPIO, Mode: hal.Mode(p.Mode), Pull: hal.Pull(or(p.Pull, "none")),
			Edge: hal.Edge(or(p.Edge, "none")), ActiveLow: p.ActiveLow, MaxOn: time.Duration(p.MaxOn),
		}
		var err error
		if pc.Initial, err = hal.ParseLevel(or(p.Initial, "low")); err != nil {
			return hc, fmt.Errorf("board.pins.%s.initial: %w", name, err)
		}
		if pc.Safe, err = hal.ParseLevel(or(p.Safe, "low")); err != nil {
			return hc, fmt.Errorf("board.pins.%s.safe: %w", name, err)
		}
		hc.Pins = append(hc.Pins, pc)
	}
	for _, name := range sortedKeys(b.Ports) {
		p := b.Ports[name]
		hc.Ports = append(hc.Ports, hal.PortConfig{Name: name, Device: p.Device, Baud: p.Baud})
	}
	for _, name := range sortedKeys(b.Buses) {
		hc.Buses = append(hc.Buses, hal.BusConfig{Name: name, Bus: b.Buses[name].I2C})
	}
	return hc, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func or(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// loadRegistry builds the registry that the config would have, without touching
// hardware: the pins are opened on a simulated board, since tool specs depend
// only on the configured names and modes, and the board is closed again. This
// lets `tools` and `parse` run beside a daemon that holds the real GPIO lines.
// The registry is for its specs only: its tools must not be run.
func loadRegistry(g *globalFlags) (*tools.Registry, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, err
	}
	hc, err := halConfig(cfg.Board)
	if err != nil {
		return nil, err
	}
	b, err := hal.Open(sim.New(), hc)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	a := &app{cfg: cfg, board: b, started: time.Now(), listing: true}
	if err := a.registerTools(); err != nil {
		return nil, err
	}
	return a.reg, nil
}

// controlPath is where the daemon of cfg serves its control socket.
func controlPath(cfg *config.Config) string {
	return filepath.Join(cfg.DataDir, channels.ControlSocketName)
}

// dialDaemon connects to the daemon running for cfg, or returns nil, nil when none
// does (then the command opens the store and board itself). A daemon this user
// may not reach, or must not trust, is an error: the command must not go on as if
// none ran (status would show empty figures, exec would try the board itself).
func dialDaemon(cfg *config.Config) (*channels.ControlClient, error) {
	path := controlPath(cfg)
	c, err := channels.DialControl(path, or(os.Getenv("USER"), "cli"))
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, channels.ErrUntrustedPeer):
		return nil, err
	case errors.Is(err, fs.ErrPermission):
		return nil, notAccessible("the daemon's control socket", path, cfg.DataDir, err)
	}
	return nil, nil // no socket, or nobody listening: no daemon
}

// notAccessible says that what the daemon keeps in dataDir cannot be reached by
// this user, and who can reach it.
func notAccessible(what, path, dataDir string, err error) error {
	owner := ""
	if o, oerr := store.OwnershipOf(dataDir); oerr == nil {
		owner = fmt.Sprintf(" (uid %d owns %s)", o.Owner, dataDir)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	return fmt.Errorf("%s %s is not accessible to this user (uid %d): %v; run this command as the daemon's user%s, e.g. sudo -u <that user> clawedge ...",
		what, path, os.Geteuid(), err, owner)
}
