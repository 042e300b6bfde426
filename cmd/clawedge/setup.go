package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/spf13/cobra"
)

// setupOpts are the wizard's answers given as flags: with --yes they are the
// answers, without it they are the defaults offered.
type setupOpts struct {
	yes          bool
	board        string
	pins         string
	ports        string
	buses        string
	tokenEnv     string
	owner        int64
	apiURL       string
	local        string
	remotes      []string
	ownerTimeout time.Duration
}

func newSetupCmd(g *globalFlags) *cobra.Command {
	o := &setupOpts{}
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Ask about the board, Telegram and models, write a commented config, then run doctor",
		Long: `An interactive wizard that writes clawedge.yaml (or --config FILE): the board
(simulated or real: it lists the /dev/gpiochip*, serial ports and I2C buses it
finds), the pins by name, Telegram (the token from @BotFather is checked with
getMe, then it waits for /start from you to learn your user id), a local model
(the catalog sizes that fit this board's memory, downloaded with progress, or a
file) and remote models (OpenAI-compatible servers such as Ollama, llama-server
and vLLM, or Anthropic; each tried with a one-token request).

Secrets are never printed and never written into the config: they go into
clawedge.env beside it (mode 0600) and the config names them as ${VARIABLES}.
Run it again to change answers: the current config gives the defaults and is
kept as clawedge.yaml.bak. With --yes the flags are the answers, for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := g.config
			if path == "" {
				path = "clawedge.yaml"
			}
			s := &setup{opts: o, in: bufio.NewReader(cmd.InOrStdin()), inFile: stdinFile(cmd), out: cmd.OutOrStdout(), path: path}
			if err := s.run(); err != nil {
				return err
			}
			g.config = path
			fmt.Fprintf(s.out, "\nRunning clawedge doctor --config %s\n", path)
			if failed := printChecks(s.out, diagnose(g)); failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("config written, but doctor found %d problem(s): see the fixes above", failed)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.yes, "yes", false, "answer every question with its flag or default: no prompts")
	f.StringVar(&o.board, "board", "", "sim or periph (default: periph when /dev/gpiochip* exists)")
	f.StringVar(&o.pins, "pins", "", `pins as "name=GPIO:in|out ..." (default: led=17:out button=27:in)`)
	f.StringVar(&o.ports, "ports", "", `serial ports as "name=/dev/ttyUSB0:115200 ..."`)
	f.StringVar(&o.buses, "buses", "", `I2C buses as "name=1 ..."`)
	f.StringVar(&o.tokenEnv, "telegram-token-env", "", "environment variable holding the bot token (never pass a token on the command line)")
	f.Int64Var(&o.owner, "telegram-owner", 0, "your Telegram user id (default: learnt from your /start)")
	f.StringVar(&o.apiURL, "telegram-api-url", "", "Bot API server (default https://api.telegram.org)")
	f.StringVar(&o.local, "local-model", "", "a catalog name to download or a .gguf file (none: no local model)")
	f.StringArrayVar(&o.remotes, "remote", nil, `a remote model as "name=N,kind=openai|anthropic,url=URL,model=M,key-env=VAR" (repeatable)`)
	f.DurationVar(&o.ownerTimeout, "telegram-wait", 2*time.Minute, "how long to wait for your /start")
	return cmd
}

func stdinFile(cmd *cobra.Command) *os.File {
	if f, ok := cmd.InOrStdin().(*os.File); ok {
		return f
	}
	return nil
}

// setup is one run of the wizard.
type setup struct {
	opts    *setupOpts
	in      *bufio.Reader
	inFile  *os.File // for turning echo off while a secret is typed
	out     io.Writer
	path    string
	old     *config.Config // the config being changed, if any
	secrets map[string]string
	w       setupConfig
}

func (s *setup) run() error {
	s.secrets = readEnvFile(envFilePath(s.path))
	if data, err := os.ReadFile(s.path); err == nil {
		cfg, err := config.Parse(data, s.path, func(k string) (string, bool) {
			if v, ok := s.secrets[k]; ok {
				return v, true
			}
			return os.LookupEnv(k)
		})
		if err != nil {
			fmt.Fprintf(s.out, "%s does not load (%v): starting from the defaults\n", s.path, err)
		} else {
			s.old = cfg
			fmt.Fprintf(s.out, "Changing %s: its values are the defaults offered.\n", s.path)
		}
	}
	fmt.Fprintln(s.out, "clawedge setup: Enter keeps the value in [brackets].")
	for _, step := range []func() error{s.board, s.telegram, s.localModel, s.remoteModels} {
		if err := step(); err != nil {
			return err
		}
	}
	return s.write()
}

// ask prints a question and reads one line; Enter (or --yes) is def.
func (s *setup) ask(question, def string) (string, error) {
	if s.opts.yes {
		return def, nil
	}
	fmt.Fprintf(s.out, "%s [%s]: ", question, def)
	line, err := s.in.ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		if errors.Is(err, io.EOF) {
			return "", errors.New("setup: the input ended before the questions did (use --yes to answer with flags)")
		}
		return "", err
	}
	if v := strings.TrimSpace(line); v != "" {
		return v, nil
	}
	return def, nil
}

// askSecret reads a secret with the terminal's echo off; it is never
// printed. Enter keeps the current one.
func (s *setup) askSecret(question string, have bool) (string, error) {
	if s.opts.yes {
		return "", nil
	}
	hint := "none"
	if have {
		hint = "keep the current one"
	}
	fmt.Fprintf(s.out, "%s (not shown as you type) [%s]: ", question, hint)
	restore := echoOff(s.inFile)
	line, err := s.in.ReadString('\n')
	restore()
	fmt.Fprintln(s.out)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	line = strings.TrimSpace(line)
	if strings.ContainsAny(line, "'\"\\") {
		return "", errors.New("setup: a secret with a quote or backslash cannot go into clawedge.env: put it in the environment yourself")
	}
	return line, nil
}

func (s *setup) yesNo(question string, def bool) (bool, error) {
	d := "n"
	if def {
		d = "y"
	}
	a, err := s.ask(question+" (y/n)", d)
	return strings.HasPrefix(strings.ToLower(a), "y"), err
}

func (s *setup) board() error {
	found := detectDevices()
	fmt.Fprintln(s.out, "\n# Board")
	for _, kind := range []string{"GPIO chips", "serial ports", "I2C buses"} {
		fmt.Fprintf(s.out, "  %s found: %s\n", kind, orNone(strings.Join(found[kind], " ")))
	}
	def := or(s.opts.board, "sim")
	if s.opts.board == "" && len(found["GPIO chips"]) > 0 {
		def = "periph"
	}
	if s.old != nil && s.opts.board == "" {
		def = s.old.Board.Driver
	}
	for {
		d, err := s.ask("Board driver: sim (simulated) or periph (this board's GPIO)", def)
		if err != nil {
			return err
		}
		if d == "sim" || d == "periph" {
			s.w.driver = d
			break
		}
		fmt.Fprintln(s.out, "  want sim or periph")
	}
	pins := or(s.opts.pins, "led=17:out button=27:in")
	ports, buses := s.opts.ports, s.opts.buses
	if s.old != nil {
		pins, ports, buses = oldPins(s.old, pins), oldPorts(s.old, ports), oldBuses(s.old, buses)
	}
	for {
		var err error
		if s.w.pins, err = s.askList("Pins by name, as name=GPIO:in|out, space separated", pins, parsePin); err != nil {
			return err
		}
		if s.w.ports, err = s.askList("Serial ports tools may open, as name=/dev/ttyX:baud (empty: none)", ports, parsePort); err != nil {
			return err
		}
		if s.w.buses, err = s.askList("I2C buses, as name=number (empty: none)", buses, parseBus); err != nil {
			return err
		}
		// Each answer parsed; together they must make a board the config
		// takes (one GPIO for two pins, a name used twice...).
		err = checkBoard(s.w)
		if err == nil {
			return nil
		}
		fmt.Fprintf(s.out, "  %v\n  the board questions again:\n", err)
		if s.opts.yes {
			return err
		}
	}
}

func (s *setup) askList(q, def string, parse func(name, v string) (string, error)) ([]setupItem, error) {
	for {
		a, err := s.ask(q, def)
		if err != nil {
			return nil, err
		}
		if a == "none" || a == "-" {
			a = ""
		}
		items, err := parseSetupList(a, parse)
		if err == nil || s.opts.yes {
			return items, err
		}
		fmt.Fprintln(s.out, " ", err)
	}
}

func (s *setup) telegram() error {
	fmt.Fprintln(s.out, "\n# Telegram")
	const env = "TELEGRAM_TOKEN"
	token := or(s.secrets[env], os.Getenv(env))
	if s.opts.tokenEnv != "" {
		token = os.Getenv(s.opts.tokenEnv)
		if token == "" {
			return fmt.Errorf("--telegram-token-env %s: the variable is empty", s.opts.tokenEnv)
		}
	}
	api := s.opts.apiURL
	if s.old != nil && api == "" && s.old.Telegram.APIURL != "https://api.telegram.org" {
		api = s.old.Telegram.APIURL
	}
	for {
		t, err := s.askSecret("Bot token from @BotFather (none: no Telegram)", token != "")
		if err != nil {
			return err
		}
		if t == "none" {
			token = ""
		} else if t != "" {
			token = t
		}
		if token == "" {
			delete(s.secrets, env)
			return nil
		}
		client := telegram.NewClient(or(api, "https://api.telegram.org"), token, telegram.ClientOptions{})
		client.Timeout = 15 * time.Second
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		bot, err := client.GetMe(ctx)
		cancel()
		if err == nil {
			fmt.Fprintf(s.out, "  the token works: this is @%s\n", bot.Username)
			s.secrets[env], s.w.telegram, s.w.apiURL = token, true, api
			return s.owner(client, bot.Username)
		}
		fmt.Fprintf(s.out, "  Telegram did not accept it: %v\n", err)
		if s.opts.yes {
			return errors.New("setup: the Telegram token was refused")
		}
		token = ""
	}
}

// owner learns the owner's user id from their /start, unless given.
func (s *setup) owner(client *telegram.Client, bot string) error {
	s.w.owner = s.opts.owner
	if s.w.owner == 0 && s.old != nil && len(s.old.Telegram.AllowUsers) > 0 {
		s.w.owner = s.old.Telegram.AllowUsers[0]
		if keep, err := s.yesNo(fmt.Sprintf("Keep user %d as the owner", s.w.owner), true); err != nil || keep {
			return err
		}
		s.w.owner = 0
	}
	if s.w.owner != 0 {
		return nil
	}
	fmt.Fprintf(s.out, "  Now send /start to @%s from your Telegram account (waiting up to %v)...\n", bot, s.opts.ownerTimeout)
	// Only a /start sent from now on, in a private chat, names the owner:
	// one waiting from before may be anybody's.
	since := time.Now().Add(-5 * time.Second).Unix()
	deadline := time.Now().Add(s.opts.ownerTimeout)
	var offset int64
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		raw, err := client.GetUpdates(ctx, offset, 10, min(10*time.Second, time.Until(deadline)))
		cancel()
		if err != nil {
			return fmt.Errorf("setup: waiting for /start: %w", err)
		}
		for _, r := range raw {
			var u telegram.Update
			if err := json.Unmarshal(r, &u); err != nil {
				continue
			}
			offset = u.UpdateID + 1
			if m := u.Message; m != nil && m.From != nil && m.Chat.Type == "private" && m.Date >= since && strings.HasPrefix(m.Text, "/start") {
				s.w.owner = m.From.ID
				fmt.Fprintf(s.out, "  got it: %s is user %d, the owner\n", or(m.From.Username, m.From.FirstName), m.From.ID)
				// Confirm the updates read, so that clawedge run does not
				// answer this /start again.
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				client.GetUpdates(ctx, offset, 1, 0)
				cancel()
				return nil
			}
		}
	}
	fmt.Fprintln(s.out, "  no /start came: nobody may use the bot until you add your id to telegram.allow_users (or run setup again)")
	return nil
}

func (s *setup) localModel() error {
	fmt.Fprintln(s.out, "\n# Local model")
	avail, _ := localmodel.MemAvailable("/proc/meminfo")
	var fits []modelfiles.Entry
	for _, e := range modelfiles.Catalog() {
		// The file, plus a quarter for the KV cache and the runtime.
		if avail == 0 || uint64(e.Size)*5/4 < avail {
			fits = append(fits, e)
		}
	}
	if len(fits) == 0 {
		fmt.Fprintf(s.out, "  none of the catalog fits in the %s of memory available: use a remote model\n", modelfiles.FormatBytes(int64(avail)))
	}
	for i, e := range fits {
		fmt.Fprintf(s.out, "  %d. %s (%s %s, %s)\n", i+1, e.Name, e.Model, e.Quant, modelfiles.FormatBytes(e.Size))
	}
	def := or(s.opts.local, "none")
	if s.old != nil && s.old.Models.Local != nil && s.opts.local == "" {
		def = s.old.Models.Local.Path
	}
	for {
		a, err := s.ask("A number above to download, a .gguf file, or none", def)
		if err != nil || a == "none" {
			return err
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(fits) {
			a = fits[n-1].Name
		}
		if e, ok := modelfiles.Lookup(a); ok {
			path, err := s.pull(e)
			if err == nil {
				s.w.local = path
				return nil
			}
			fmt.Fprintf(s.out, "  download failed: %v\n", err)
		} else if c := modelFileCheck(&config.LocalModel{Path: a}, "/proc/meminfo"); c.ok {
			s.w.local = a
			return nil
		} else {
			fmt.Fprintf(s.out, "  %s\n  fix: %s\n", c.info, c.fix)
		}
		if s.opts.yes {
			return errors.New("setup: --local-model: not usable")
		}
	}
}

// pull downloads a catalog model with `clawedge model pull`'s progress.
func (s *setup) pull(e modelfiles.Entry) (string, error) {
	dir := filepath.Join(s.dataDir(), "models")
	g := &globalFlags{config: s.path}
	pull := newModelPullCmd(g)
	pull.SetArgs([]string{e.Name, "--dir", dir})
	pull.SetOut(s.out)
	pull.SetErr(s.out)
	if err := pull.Execute(); err != nil {
		return "", err
	}
	return filepath.Join(dir, e.File), nil
}

func (s *setup) remoteModels() error {
	fmt.Fprintln(s.out, "\n# Remote models")
	var defs []string
	if len(s.opts.remotes) > 0 {
		defs = s.opts.remotes
	} else if s.old != nil {
		for _, r := range s.old.Models.Remote {
			defs = append(defs, fmt.Sprintf("name=%s,kind=%s,url=%s,model=%s,key-env=%s", r.Name, r.Kind, r.BaseURL, r.Model, keyEnv(r.Name)))
		}
	}
	if s.opts.yes {
		for _, d := range defs {
			r, err := parseRemote(d)
			if err != nil {
				return err
			}
			if k := os.Getenv(r.keyEnv); k != "" {
				s.secrets[r.keyEnv] = k
			}
			if err := s.tryRemote(r); err != nil {
				return err
			}
			s.w.remotes = append(s.w.remotes, r)
		}
		return nil
	}
	if len(defs) > 0 {
		fmt.Fprintf(s.out, "  configured now: %s\n", strings.Join(defs, "; "))
		keep, err := s.yesNo("Keep them", true)
		if err != nil {
			return err
		}
		if keep {
			for _, d := range defs {
				r, _ := parseRemote(d)
				s.w.remotes = append(s.w.remotes, r)
			}
		}
	}
	for {
		kind, err := s.ask("Add a remote model: openai (any OpenAI-compatible server: Ollama, llama-server, vLLM, OpenAI), anthropic, or none", "none")
		if err != nil || kind == "none" {
			return err
		}
		if kind == "ollama" || kind == "llama-server" || kind == "vllm" {
			kind = "openai"
		}
		if kind != "openai" && kind != "anthropic" {
			fmt.Fprintln(s.out, "  want openai, anthropic or none")
			continue
		}
		r := setupRemote{kind: kind}
		defURL, defModel := "http://localhost:11434/v1", "qwen2.5:7b"
		if kind == "anthropic" {
			defURL, defModel = "https://api.anthropic.com", "claude-sonnet-4-5"
		}
		if r.name, err = s.ask("Its name (for routes and logs)", kind); err != nil {
			return err
		}
		if r.baseURL, err = s.ask("Base URL (Ollama: http://HOST:11434/v1, llama-server and vLLM: http://HOST:PORT/v1)", defURL); err != nil {
			return err
		}
		if r.model, err = s.ask("Model name", defModel); err != nil {
			return err
		}
		r.keyEnv = keyEnv(r.name)
		key, err := s.askSecret("API key (none for a server without keys)", s.secrets[r.keyEnv] != "")
		if err != nil {
			return err
		}
		if key == "none" {
			delete(s.secrets, r.keyEnv)
		} else if key != "" {
			s.secrets[r.keyEnv] = key
		}
		if err := s.tryRemote(r); err != nil {
			keep, err := s.yesNo("Keep it anyway", false)
			if err != nil {
				return err
			}
			if !keep {
				continue
			}
		}
		s.w.remotes = append(s.w.remotes, r)
	}
}

// tryRemote sends the one-token request doctor sends.
func (s *setup) tryRemote(r setupRemote) error {
	c := remoteCheck(r.config(s.secrets[r.keyEnv]), remoteCheckTimeout)
	if c.ok {
		fmt.Fprintf(s.out, "  %s: %s\n", r.name, c.info)
		return nil
	}
	fmt.Fprintf(s.out, "  %s: %s\n  fix: %s\n", r.name, c.info, c.fix)
	return errors.New(c.info)
}

// keyEnv is the environment variable of a remote model's key: LAN_API_KEY.
func keyEnv(name string) string {
	return strings.ToUpper(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)) + "_API_KEY"
}

func detectDevices() map[string][]string {
	glob := func(patterns ...string) []string {
		var out []string
		for _, p := range patterns {
			m, _ := filepath.Glob(p)
			out = append(out, m...)
		}
		sort.Strings(out)
		return out
	}
	return map[string][]string{
		"GPIO chips":   glob("/dev/gpiochip*"),
		"serial ports": glob("/dev/serial0", "/dev/ttyAMA*", "/dev/ttyUSB*", "/dev/ttyACM*"),
		"I2C buses":    glob("/dev/i2c-*"),
	}
}
