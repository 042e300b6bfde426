package setup

import (
	"bufio"
	"cmp"
	"context"
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
	"github.com/clawedge/clawedge/doctor"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// Options are the wizard's answers given as flags: with --yes they are the
// answers, without it they are the defaults offered.
type Options struct {
	Yes          bool
	Board        string
	Pins         string
	Ports        string
	Buses        string
	TokenEnv     string
	Owner        int64
	APIURL       string
	Local        string
	Remotes      []string
	OwnerTimeout time.Duration
	// Pull downloads the catalog model name into dir, saying its progress
	// on out (clawedge model pull).
	Pull func(name, dir string, out io.Writer) error
}

// Wizard is one run of the wizard: it asks on In and Out, and writes the
// config at Path (and its secrets into clawedge.env beside it).
type Wizard struct {
	opts    *Options
	in      *bufio.Reader
	inFile  *os.File // for turning echo off while a secret is typed
	out     io.Writer
	path    string
	old     *config.Config // the config being changed, if any
	secrets map[string]string
	w       setupConfig
}

// Run asks each question, then writes the config.
func (s *Wizard) Run() error {
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
func (s *Wizard) ask(question, def string) (string, error) {
	if s.opts.Yes {
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
func (s *Wizard) askSecret(question string, have bool) (string, error) {
	if s.opts.Yes {
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

func (s *Wizard) yesNo(question string, def bool) (bool, error) {
	d := "n"
	if def {
		d = "y"
	}
	a, err := s.ask(question+" (y/n)", d)
	return strings.HasPrefix(strings.ToLower(a), "y"), err
}

func (s *Wizard) board() error {
	found := detectDevices()
	fmt.Fprintln(s.out, "\n# Board")
	for _, kind := range []string{"GPIO chips", "serial ports", "I2C buses"} {
		fmt.Fprintf(s.out, "  %s found: %s\n", kind, cmp.Or(strings.Join(found[kind], " "), "none"))
	}
	def := cmp.Or(s.opts.Board, "sim")
	if s.opts.Board == "" && len(found["GPIO chips"]) > 0 {
		def = "periph"
	}
	if s.old != nil && s.opts.Board == "" {
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
	pins := cmp.Or(s.opts.Pins, "led=17:out button=27:in")
	ports, buses := s.opts.Ports, s.opts.Buses
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
		if s.opts.Yes {
			return err
		}
	}
}

func (s *Wizard) askList(q, def string, parse func(name, v string) (string, error)) ([]setupItem, error) {
	for {
		a, err := s.ask(q, def)
		if err != nil {
			return nil, err
		}
		if a == "none" || a == "-" {
			a = ""
		}
		items, err := parseSetupList(a, parse)
		if err == nil || s.opts.Yes {
			return items, err
		}
		fmt.Fprintln(s.out, " ", err)
	}
}

func (s *Wizard) telegram() error {
	fmt.Fprintln(s.out, "\n# Telegram")
	const env = "TELEGRAM_TOKEN"
	token := cmp.Or(s.secrets[env], os.Getenv(env))
	if s.opts.TokenEnv != "" {
		token = os.Getenv(s.opts.TokenEnv)
		if token == "" {
			return fmt.Errorf("--telegram-token-env %s: the variable is empty", s.opts.TokenEnv)
		}
	}
	api := s.opts.APIURL
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
		client, bot, err := checkToken(context.Background(), api, token) // steps.go
		if err == nil {
			fmt.Fprintf(s.out, "  the token works: this is @%s\n", bot)
			s.secrets[env], s.w.telegram, s.w.apiURL = token, true, api
			return s.owner(client, bot)
		}
		fmt.Fprintf(s.out, "  Telegram did not accept it: %v\n", err)
		if s.opts.Yes {
			return errors.New("setup: the Telegram token was refused")
		}
		token = ""
	}
}

// owner learns the owner's user id from their /start, unless given.
func (s *Wizard) owner(client *telegram.Client, bot string) error {
	s.w.owner = s.opts.Owner
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
	fmt.Fprintf(s.out, "  Now send /start to @%s from your Telegram account (waiting up to %v)...\n", bot, s.opts.OwnerTimeout)
	// Only a /start sent from now on, in a private chat, names the owner:
	// one waiting from before may be anybody's.
	id, who, err := awaitOwner(context.Background(), client, time.Now().Add(-5*time.Second), time.Now().Add(s.opts.OwnerTimeout)) // steps.go
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if id != 0 {
		s.w.owner = id
		fmt.Fprintf(s.out, "  got it: %s is user %d, the owner\n", who, id)
		return nil
	}
	fmt.Fprintln(s.out, "  no /start came: nobody may use the bot until you add your id to telegram.allow_users (or run setup again)")
	return nil
}

func (s *Wizard) localModel() error {
	fmt.Fprintln(s.out, "\n# Local model")
	fits, avail := fitting("/proc/meminfo", modelfiles.Catalog()) // steps.go
	if len(fits) == 0 {
		fmt.Fprintf(s.out, "  none of the catalog fits in the %s of memory available: use a remote model\n", modelfiles.FormatBytes(int64(avail)))
	}
	for i, e := range fits {
		fmt.Fprintf(s.out, "  %d. %s (%s %s, %s)\n", i+1, e.Name, e.Model, e.Quant, modelfiles.FormatBytes(e.Size))
	}
	def := cmp.Or(s.opts.Local, "none")
	if s.old != nil && s.old.Models.Local != nil && s.opts.Local == "" {
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
		} else if c := doctor.ModelFile(&config.LocalModel{Path: a}, "/proc/meminfo"); c.OK {
			s.w.local = a
			return nil
		} else {
			fmt.Fprintf(s.out, "  %s\n  fix: %s\n", c.Info, c.Fix)
		}
		if s.opts.Yes {
			return errors.New("setup: --local-model: not usable")
		}
	}
}

// pull downloads a catalog model with `clawedge model pull`'s progress.
func (s *Wizard) pull(e modelfiles.Entry) (string, error) {
	dir := filepath.Join(s.dataDir(), "models")
	if s.opts.Pull == nil {
		return "", errors.New("setup: no way to download models here")
	}
	if err := s.opts.Pull(e.Name, dir, s.out); err != nil {
		return "", err
	}
	return filepath.Join(dir, e.File), nil
}

func (s *Wizard) remoteModels() error {
	fmt.Fprintln(s.out, "\n# Remote models")
	var defs []string
	if len(s.opts.Remotes) > 0 {
		defs = s.opts.Remotes
	} else if s.old != nil {
		for _, r := range s.old.Models.Remote {
			defs = append(defs, fmt.Sprintf("name=%s,kind=%s,url=%s,model=%s,key-env=%s", r.Name, r.Kind, r.BaseURL, r.Model, keyEnv(r.Name)))
		}
	}
	if s.opts.Yes {
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
func (s *Wizard) tryRemote(r setupRemote) error {
	c := tryRemote(r, s.secrets[r.keyEnv]) // steps.go
	if c.OK {
		fmt.Fprintf(s.out, "  %s: %s\n", r.name, c.Info)
		return nil
	}
	fmt.Fprintf(s.out, "  %s: %s\n  fix: %s\n", r.name, c.Info, c.Fix)
	return errors.New(c.Info)
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

// New is the wizard that writes the config at path, asking on in (inFile is
// in as a file, for turning echo off while a secret is typed; nil: not a
// terminal) and out, with opts' answers or defaults.
func New(opts *Options, in io.Reader, inFile *os.File, out io.Writer, path string) *Wizard {
	return &Wizard{opts: opts, in: bufio.NewReader(in), inFile: inFile, out: out, path: path}
}
