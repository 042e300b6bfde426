package setup

// This file: the dashboard's setup page's side (channels/web/page_setup.go):
// the steps as tools (setup/telegram, setup/owner, setup/write), so that
// each is a call on the one call path, decided by the one authorizer and
// audited; all three are board-only (a person at the board or an owner).
// They run the wizard's steps (steps.go) and its writer (writeConfig): the
// page and `clawedge setup` write the same commented config. Secrets typed
// on the page are held here (Held) and the calls name them by a handle.

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/channels/web"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/doctor"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/tools"
)

// Page is the setup of one running daemon: the config file it writes, and
// how the daemon applies it.
type Page struct {
	Path    string // the config file written
	DataDir string // the daemon's data_dir (models are in DataDir/models)
	Held    *Held
	// Restart applies the config written at path (the daemon restarts with
	// it, once the call's answer is out); nil: no daemon to restart.
	Restart func(path string) error
	Started time.Time // when the daemon started
	// Meminfo is /proc/meminfo (tests: a file of their own).
	Meminfo string
	// Catalog is the models offered (nil: modelfiles.Catalog(); tests
	// serve their own).
	Catalog func() []modelfiles.Entry
	// Devices are the board's GPIO chips, serial ports and I2C buses (nil:
	// those in /dev, as the wizard lists them).
	Devices func() map[string][]string

	mu   sync.Mutex
	pull *web.SetupPull // the download started from the page, if any
}

func (p *Page) catalog() []modelfiles.Entry {
	if p.Catalog != nil {
		return p.Catalog()
	}
	return modelfiles.Catalog()
}

func (p *Page) meminfo() string { return cmp.Or(p.Meminfo, "/proc/meminfo") }

func (p *Page) devices() map[string][]string {
	if p.Devices != nil {
		return p.Devices()
	}
	return detectDevices()
}

// RegisterTools adds setup/telegram, setup/owner and setup/write over p
// (nil: their specs only, for listing) to reg.
func RegisterTools(reg *tools.Registry, p *Page) error {
	return reg.Register(telegramTool{p}, ownerTool{p}, writeTool{p}, pullTool{p})
}

var errNoPage = errors.New("setup from the dashboard needs the running daemon")

const tokenEnv = "TELEGRAM_TOKEN"

// Held keeps the secrets typed on the setup page for a while, by handle:
// the calls that use them carry the handle, which is no secret's text.
type Held struct {
	mu sync.Mutex
	m  map[string]held
}

type held struct {
	v     string
	until time.Time
}

// Secrets are held this long, and this many at most.
const (
	heldFor = 30 * time.Minute
	maxHeld = 16
)

const heldPrefix = "held:"

// Hold keeps secret and returns its handle.
func (h *Held) Hold(secret string) string {
	var b [16]byte
	rand.Read(b[:])
	ref := heldPrefix + hex.EncodeToString(b[:])
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.m == nil {
		h.m = map[string]held{}
	}
	for k, v := range h.m {
		if now.After(v.until) {
			delete(h.m, k)
		}
	}
	for len(h.m) >= maxHeld { // the one that expires first goes
		var first string
		for k, v := range h.m {
			if first == "" || v.until.Before(h.m[first].until) {
				first = k
			}
		}
		delete(h.m, first)
	}
	h.m[ref] = held{v: secret, until: now.Add(heldFor)}
	return ref
}

// secret is the secret of handle ref.
func (h *Held) secret(ref string) (string, error) {
	if h != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if v, ok := h.m[ref]; ok && time.Now().Before(v.until) {
			return v.v, nil
		}
	}
	return "", fmt.Errorf("no secret is held as %q: type it again on the setup page", ref)
}

func refParam(name, doc string) grammar.ArgSpec {
	return grammar.ArgSpec{Name: name, Doc: doc + " (a handle from the setup page, held:..., never the secret)", Type: grammar.TypeString, MaxLen: 64}
}

func apiParam() grammar.ArgSpec {
	return grammar.ArgSpec{Name: "api_url", Doc: "the Bot API server (empty: Telegram's)", Type: grammar.TypeString, MaxLen: 512}
}

type telegramTool struct{ p *Page }

func (telegramTool) BoardOnly() {}

func (telegramTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "setup/telegram", Doc: "Try a Telegram bot token with getMe, as clawedge setup does (only a person at the board or an owner).",
		Params: []grammar.ArgSpec{refParam("token", "the bot token"), apiParam()}}
}

func (t telegramTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	_, bot, err := t.p.heldBot(ctx, a)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Text: "the token works: this is @" + bot, Fields: map[string]grammar.Value{"bot": grammar.StringValue(bot)}}, nil
}

type ownerTool struct{ p *Page }

func (ownerTool) BoardOnly() {}

// ownerWait is how long setup/owner waits for the owner's /start.
const ownerWait = 30 * time.Second

func (ownerTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "setup/owner", Doc: "Learn the owner's Telegram user id from the /start they send the bot (waits up to 30 s; only a person at the board or an owner).",
		Params: []grammar.ArgSpec{refParam("token", "the bot token"), apiParam(),
			{Name: "since", Doc: "only a /start sent at this time (unix seconds) or later", Type: grammar.TypeInteger, Min: tools.Float(0)}}}
}

func (t ownerTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	client, bot, err := t.p.heldBot(ctx, a)
	if err != nil {
		return tools.Result{}, err
	}
	since := time.Unix(a.Int("since"), 0)
	if time.Since(since) > time.Hour { // a /start waiting from long ago may be anybody's
		since = time.Now().Add(-time.Minute)
	}
	id, who, err := awaitOwner(ctx, client, since, time.Now().Add(ownerWait))
	if err != nil {
		return tools.Result{}, err
	}
	if id == 0 {
		return tools.Result{}, fmt.Errorf("no /start came to @%s within %v: send it from your own account and press Find me again", bot, ownerWait)
	}
	return tools.Result{Text: fmt.Sprintf("got it: %s is user %d, the owner", who, id),
		Fields: map[string]grammar.Value{"owner": grammar.IntValue(id)}}, nil
}

type writeTool struct{ p *Page }

func (writeTool) BoardOnly() {}

func (writeTool) Spec() grammar.ToolSpec {
	str := func(name, doc string, max int) grammar.ArgSpec {
		return grammar.ArgSpec{Name: name, Doc: doc, Type: grammar.TypeString, MaxLen: max}
	}
	return grammar.ToolSpec{Name: "setup/write", Doc: "Write the config as clawedge setup does (the previous one kept as .bak, secrets into clawedge.env) and restart the daemon with it (only a person at the board or an owner).",
		Params: []grammar.ArgSpec{
			{Name: "driver", Doc: "the board driver", Type: grammar.TypeString, Enum: []string{"sim", "periph"}, Required: true},
			str("pins", "pins by name: name=GPIO:in|out ...", 1024), str("ports", "serial ports: name=/dev/ttyX:baud ...", 1024), str("buses", "I2C buses: name=number ...", 512),
			str("telegram", "keep (the configured bot), none, or a checked token's handle (held:...)", 64), apiParam(),
			{Name: "owner", Doc: "the owner's Telegram user id (0: nobody yet)", Type: grammar.TypeInteger, Min: tools.Float(0)},
			str("local", "the local model: none, keep, a catalog name (downloaded), or a .gguf file", 512),
			{Name: "remote", Doc: "the remote models: keep, none, or set (the one described by remote_*)", Type: grammar.TypeString, Enum: []string{"keep", "none", "set"}, Default: "none"},
			str("remote_name", "its name", 64), {Name: "remote_kind", Doc: "its kind", Type: grammar.TypeString, Enum: []string{"openai", "anthropic"}, Default: "openai"},
			str("remote_url", "its base URL", 512), str("remote_model", "its model", 128), refParam("remote_key", "its API key"),
		}}
}

func (t writeTool) Run(ctx context.Context, a grammar.Args) (tools.Result, error) {
	p := t.p
	if p == nil {
		return tools.Result{}, errNoPage
	}
	old, secrets := loadOld(p.Path)
	w := setupConfig{driver: a.String("driver")}
	var err error
	if w.pins, err = parseSetupList(a.String("pins"), parsePin); err != nil {
		return tools.Result{}, fmt.Errorf("pins: %w", err)
	}
	if w.ports, err = parseSetupList(a.String("ports"), parsePort); err != nil {
		return tools.Result{}, fmt.Errorf("serial ports: %w", err)
	}
	if w.buses, err = parseSetupList(a.String("buses"), parseBus); err != nil {
		return tools.Result{}, fmt.Errorf("I2C buses: %w", err)
	}
	if err := checkBoard(w); err != nil {
		return tools.Result{}, err
	}
	// The daemon must come back with what is written: a real board's
	// driver without its GPIO controller would not open.
	if w.driver == "periph" && len(p.devices()["GPIO chips"]) == 0 {
		return tools.Result{}, errors.New("driver periph: this board has no /dev/gpiochip*, and the daemon would not start with it: choose sim")
	}
	switch tg := a.String("telegram"); {
	case tg == "none" || tg == "":
		delete(secrets, tokenEnv)
	case tg == "keep":
		tok := cmp.Or(secrets[tokenEnv], os.Getenv(tokenEnv))
		if old == nil || old.Telegram.Token.Reveal() == "" && tok == "" {
			return tools.Result{}, errors.New("telegram: keep, but no bot is configured")
		}
		if tok == "" {
			tok = old.Telegram.Token.Reveal()
		}
		secrets[tokenEnv], w.telegram = tok, true
	default:
		tok, err := p.Held.secret(tg)
		if err != nil {
			return tools.Result{}, err
		}
		secrets[tokenEnv], w.telegram = tok, true
	}
	if w.telegram {
		if w.apiURL = a.String("api_url"); w.apiURL == DefaultAPIURL {
			w.apiURL = ""
		}
		if w.apiURL == "" && old != nil && old.Telegram.APIURL != DefaultAPIURL {
			w.apiURL = old.Telegram.APIURL
		}
		if err := checkURL(w.apiURL); err != nil {
			return tools.Result{}, err
		}
		w.owner = a.Int("owner")
	}
	if w.local, err = p.localModel(a.String("local"), old); err != nil {
		return tools.Result{}, err
	}
	switch a.String("remote") {
	case "keep":
		if old != nil {
			for _, r := range old.Models.Remote {
				sr := setupRemote{name: r.Name, kind: r.Kind, baseURL: r.BaseURL, model: r.Model, keyEnv: keyEnv(r.Name)}
				if k := r.APIKey.Reveal(); k != "" {
					secrets[sr.keyEnv] = k
				}
				w.remotes = append(w.remotes, sr)
			}
		}
	case "set":
		r := setupRemote{name: a.String("remote_name"), kind: a.String("remote_kind"), baseURL: a.String("remote_url"), model: a.String("remote_model")}
		if !grammar.IsIdent(r.name) || r.model == "" {
			return tools.Result{}, errors.New("remote model: a name (a word such as lan) and a model are needed")
		}
		r.keyEnv = keyEnv(r.name)
		key := ""
		if ref := a.String("remote_key"); ref != "" {
			if key, err = p.Held.secret(ref); err != nil {
				return tools.Result{}, err
			}
		}
		if c := tryRemote(r, key); !c.OK { // steps.go: one token
			return tools.Result{}, fmt.Errorf("remote model %s: %s (fix: %s)", r.name, c.Info, c.Fix)
		}
		if key != "" {
			secrets[r.keyEnv] = key
		}
		w.remotes = append(w.remotes, r)
	}
	wrote, err := writeConfig(p.Path, w, old, p.DataDir, secrets)
	if err != nil {
		return tools.Result{}, err
	}
	if p.Restart == nil {
		return tools.Result{Text: wrote + "; restart the daemon to apply it"}, nil
	}
	if err := p.Restart(p.Path); err != nil {
		return tools.Result{Text: wrote + "; restart the daemon to apply it (" + err.Error() + ")"}, nil
	}
	return tools.Result{Text: wrote + "; the daemon restarts with it"}, nil
}

// localModel is the local model's file for answer: none, keep, a catalog
// model already downloaded into data_dir/models, or a .gguf file doctor
// finds usable.
func (p *Page) localModel(answer string, old *config.Config) (string, error) {
	switch answer {
	case "", "none":
		return "", nil
	case "keep":
		if old == nil || old.Models.Local == nil {
			return "", errors.New("local model: keep, but none is configured")
		}
		return old.Models.Local.Path, nil
	}
	if e, ok := p.lookup(answer); ok {
		path := filepath.Join(p.DataDir, "models", e.File)
		if _, err := os.Stat(path); err != nil {
			return "", fmt.Errorf("local model %s is not downloaded: clawedge model pull %s (at the board) first", e.Name, e.Name)
		}
		return path, nil
	}
	if c := doctor.ModelFile(&config.LocalModel{Path: answer}, cmp.Or(p.Meminfo, "/proc/meminfo")); !c.OK {
		return "", fmt.Errorf("local model: %s (fix: %s)", c.Info, c.Fix)
	}
	return answer, nil
}

// checkURL refuses a Bot API server that is not an http(s) URL.
func checkURL(u string) error {
	if u == "" {
		return nil
	}
	if p, err := url.Parse(u); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return fmt.Errorf("api_url %q: want an http(s) URL", u)
	}
	return nil
}

// loadOld is the config at path, with the secrets of clawedge.env beside
// it (nil when it does not load), and those secrets.
func loadOld(path string) (*config.Config, map[string]string) {
	secrets := readEnvFile(envFilePath(path))
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, secrets
	}
	cfg, err := config.Parse(data, path, func(k string) (string, bool) {
		if v, ok := secrets[k]; ok {
			return v, true
		}
		return os.LookupEnv(k)
	})
	if err != nil {
		return nil, secrets
	}
	return cfg, secrets
}

// Facts are the page's reads (web.SetupFacts).
type Facts struct{ P *Page }

// Setup is what the form starts from: the config in force, no secret.
func (f Facts) Setup() web.SetupView {
	p := f.P
	v := web.SetupView{Config: p.Path, Driver: "sim", Pins: "led=17:out button=27:in"}
	if old, _ := loadOld(p.Path); old != nil {
		v.Driver = cmp.Or(old.Board.Driver, "sim")
		v.Pins, v.Ports, v.Buses = oldPins(old, ""), oldPorts(old, ""), oldBuses(old, "")
		v.Telegram = old.Telegram.Token.Reveal() != ""
		if old.Telegram.APIURL != DefaultAPIURL {
			v.APIURL = old.Telegram.APIURL
		}
		if len(old.Telegram.AllowUsers) > 0 {
			v.Owner = old.Telegram.AllowUsers[0]
		}
		if old.Models.Local != nil {
			v.Local = old.Models.Local.Path
		}
		for _, r := range old.Models.Remote {
			host := r.BaseURL
			if u, err := url.Parse(r.BaseURL); err == nil && u.Host != "" {
				host = u.Host // never a user or password a URL may carry
			}
			v.Remotes = append(v.Remotes, strings.TrimSpace(fmt.Sprintf("%s: %s %s %s", r.Name, r.Kind, r.Model, host)))
		}
	}
	fits, avail := fitting(p.meminfo(), p.catalog())
	v.Memory = "unknown memory"
	if avail > 0 {
		v.Memory = modelfiles.FormatBytes(int64(avail))
	}
	for _, e := range fits {
		_, err := os.Stat(filepath.Join(p.DataDir, "models", e.File))
		v.Models = append(v.Models, web.SetupModel{Name: e.Name, About: fmt.Sprintf("%s %s, %s", e.Model, e.Quant, modelfiles.FormatBytes(e.Size)), Installed: err == nil})
	}
	p.mu.Lock()
	if p.pull != nil {
		pl := *p.pull
		v.Pull = &pl
	}
	p.mu.Unlock()
	return v
}

// Hold keeps a secret typed on the page.
func (f Facts) Hold(secret string) string { return f.P.Held.Hold(secret) }

// Started is when the daemon started.
func (f Facts) Started() time.Time { return f.P.Started }

// EnvFile is the secrets setup wrote beside the config at path
// (clawedge.env): a daemon restarting after setup/write takes them into its
// environment, as a service's EnvironmentFile= does.
func EnvFile(path string) map[string]string { return readEnvFile(envFilePath(path)) }

// Dashboard registers the setup tools for a daemon and returns its setup
// page's facts (daemon.Options.Setup).
func Dashboard(reg *tools.Registry, place daemon.SetupPlace) (web.SetupFacts, error) {
	p := &Page{Path: place.Config, DataDir: place.DataDir, Held: &Held{}, Restart: place.Restart, Started: place.Started}
	if err := RegisterTools(reg, p); err != nil {
		return nil, err
	}
	return Facts{P: p}, nil
}

// lookup is the catalog model name.
func (p *Page) lookup(name string) (modelfiles.Entry, bool) {
	for _, e := range p.catalog() {
		if strings.EqualFold(name, e.Name) {
			return e, true
		}
	}
	return modelfiles.Entry{}, false
}

type pullTool struct{ p *Page }

func (pullTool) BoardOnly() {}

func (pullTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "setup/pull", Doc: "Download a catalog model that fits this board into data_dir/models, verified, as clawedge model pull does; in the background, its progress on the setup page (only a person at the board or an owner).",
		Params: []grammar.ArgSpec{{Name: "name", Doc: "the catalog's name, such as qwen2.5-0.5b-q4_k_m", Type: grammar.TypeString, Required: true, MaxLen: 128}}}
}

func (t pullTool) Run(_ context.Context, a grammar.Args) (tools.Result, error) {
	p := t.p
	if p == nil {
		return tools.Result{}, errNoPage
	}
	e, ok := p.lookup(a.String("name"))
	if !ok {
		return tools.Result{}, fmt.Errorf("no model %q in the catalog", a.String("name"))
	}
	fits, avail := fitting(p.meminfo(), p.catalog())
	if !slices.ContainsFunc(fits, func(f modelfiles.Entry) bool { return f.Name == e.Name }) {
		return tools.Result{}, fmt.Errorf("%s (%s) does not fit in this board's %s of available memory", e.Name, modelfiles.FormatBytes(e.Size), modelfiles.FormatBytes(int64(avail)))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pull != nil && !p.pull.Finished && p.pull.Error == "" {
		return tools.Result{}, fmt.Errorf("%s is being downloaded: one download at a time", p.pull.Name)
	}
	p.pull = &web.SetupPull{Name: e.Name, Total: e.Size}
	dir := filepath.Join(p.DataDir, "models")
	go p.download(e, dir)
	return tools.Result{Text: fmt.Sprintf("downloading %s (%s) into %s; the setup page shows its progress", e.Name, modelfiles.FormatBytes(e.Size), dir)}, nil
}

// download runs one catalog download, its progress in p.pull. The daemon
// stopping cuts it; the part downloaded is resumed by the next one.
func (p *Page) download(e modelfiles.Entry, dir string) {
	progress := func(done, total int64) {
		p.mu.Lock()
		p.pull.Done, p.pull.Total = done, total
		p.mu.Unlock()
	}
	_, err := modelfiles.Download(context.Background(), modelfiles.Request{URL: e.URL, Dir: dir, File: e.File, Size: e.Size, SHA256: e.SHA256,
		UserAgent: "clawedge-setup", Progress: progress})
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case errors.Is(err, modelfiles.ErrExists):
		p.pull.Finished, p.pull.Done = true, p.pull.Total
	case err != nil:
		p.pull.Error = err.Error()
	default:
		p.pull.Finished, p.pull.Done = true, e.Size
	}
}

// heldBot is the bot of the held token a call names (its token and api_url),
// tried with getMe: the first step of setup/telegram and setup/owner.
func (p *Page) heldBot(ctx context.Context, a grammar.Args) (*telegram.Client, string, error) {
	if p == nil {
		return nil, "", errNoPage
	}
	token, err := p.Held.secret(a.String("token"))
	if err != nil {
		return nil, "", err
	}
	if err := checkURL(a.String("api_url")); err != nil {
		return nil, "", err
	}
	client, bot, err := checkToken(ctx, a.String("api_url"), token)
	if err != nil {
		return nil, "", fmt.Errorf("Telegram did not accept the token: %w", err)
	}
	return client, bot, nil
}
