package web

// The setup page (owners only): what `clawedge setup` asks, in the browser,
// through the same code (the setup package): the Telegram token tried with
// getMe and the owner's user id taken from their /start, the local model
// from the catalog models that fit this board or a remote one tried with a
// one-token request, the pins by name; then the same commented config is
// written (the previous one kept as .bak) and the daemon restarts with it,
// which the page follows (assets/setup.js polls /api/setup until the daemon
// that answers is a new one). Each step is a call by web:NAME on the call
// path: setup/telegram, setup/owner, setup/write are board-only, so the
// authorizer runs them for an owner's browser only and audits a refusal.
// A secret typed here (the token, an API key) is handed to the daemon
// (SetupFacts.Hold) and the calls name it by a handle: no secret is in a
// call, the audit, a log, or a page after it was submitted.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SetupModel is a catalog model that fits this board.
type SetupModel struct {
	Name      string // the catalog's name (qwen2.5-0.5b-q4_k_m)
	About     string // model, quantization, size
	Installed bool   // its file is in data_dir/models
}

// SetupView is what the setup form starts from: the config in force, with
// no secret, only whether one is set.
type SetupView struct {
	Config             string // the file setup writes
	Driver             string
	Pins, Ports, Buses string // as the wizard asks them: led=17:out button=27:in
	Telegram           bool   // a bot token is configured
	APIURL             string
	Owner              int64
	Local              string // the local model's file; "" none
	Models             []SetupModel
	Memory             string   // the memory available, as text
	Remotes            []string // the remote models, one line each, no key
	Pull               *SetupPull
}

// SetupPull is the catalog model download the page started (setup/pull).
type SetupPull struct {
	Name     string `json:"name"`
	Done     int64  `json:"done"`
	Total    int64  `json:"total"` // -1: unknown
	Finished bool   `json:"finished"`
	Error    string `json:"error,omitempty"`
}

// SetupFacts is what the setup page reads of the daemon, and where a
// secret typed on it waits for the calls that use it.
type SetupFacts interface {
	Setup() SetupView
	// Hold keeps secret for the setup calls and returns its handle, which
	// they take instead of it.
	Hold(secret string) string
	// Started is when this daemon started: a new time is a restart.
	Started() time.Time
}

func (s *Server) setupRoutes() []route {
	return []route{
		{"GET /setup", read, s.guard(s.setupPage, true)},
		{"GET /api/setup", read, s.guard(s.apiSetup, true)},
		{"POST /setup/telegram", call, s.guard(s.setupTelegram, true)},
		{"POST /setup/owner", call, s.guard(s.setupOwner, true)},
		{"POST /setup/write", call, s.guard(s.setupWrite, true)},
		{"POST /setup/pull", call, s.guard(s.setupPull, true)},
	}
}

// setupState is what the steps before the form learnt, carried in it.
type setupState struct {
	Token  string // a held token's handle
	Bot    string // its bot's name
	APIURL string
	Since  string // when the owner was asked to send /start (unix seconds)
	Owner  string
}

func stateOf(r *http.Request) setupState {
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	return setupState{Token: f("token_ref"), Bot: f("bot"), APIURL: f("api_url"), Since: f("since"), Owner: f("owner")}
}

func (s *Server) setupPage(w http.ResponseWriter, r *http.Request) {
	s.writeSetup(w, sessionOf(r), http.StatusOK, "", setupState{})
}

func (s *Server) apiSetup(w http.ResponseWriter, r *http.Request) {
	if s.Setup == nil {
		apiError(w, http.StatusNotFound, "setup is off on this board")
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Started string     `json:"started"`
		Pull    *SetupPull `json:"pull,omitempty"`
	}{s.Setup.Started().UTC().Format(time.RFC3339Nano), s.Setup.Setup().Pull})
}

// setupPull starts a catalog model's download (setup/pull); the page shows
// its progress.
func (s *Server) setupPull(w http.ResponseWriter, r *http.Request) {
	se, st := sessionOf(r), stateOf(r)
	if s.Setup == nil {
		s.writeSetup(w, se, http.StatusNotFound, "setup is off on this board", st)
		return
	}
	res := s.formCall(w, r, "setup/pull", map[string]any{"name": r.PostFormValue("model")})
	s.writeSetup(w, se, callStatus(res), res.Text, st)
}

// setupTelegram holds the typed token and tries it (setup/telegram: getMe).
func (s *Server) setupTelegram(w http.ResponseWriter, r *http.Request) {
	se, st := sessionOf(r), stateOf(r)
	if s.Setup == nil {
		s.writeSetup(w, se, http.StatusNotFound, "setup is off on this board", st)
		return
	}
	st.Token, st.Bot = "", ""
	if tok := strings.TrimSpace(r.PostFormValue("token")); tok != "" {
		st.Token = s.Setup.Hold(tok)
	}
	res := s.formCall(w, r, "setup/telegram", map[string]any{"token": st.Token, "api_url": st.APIURL})
	if res.Failed {
		s.writeSetup(w, se, callStatus(res), res.Text, setupState{APIURL: st.APIURL})
		return
	}
	st.Bot, _ = res.Fields["bot"].(string)
	st.Since = strconv.FormatInt(time.Now().Unix()-5, 10)
	s.writeSetup(w, se, http.StatusOK, res.Text, st)
}

// setupOwner waits a little for the owner's /start (setup/owner).
func (s *Server) setupOwner(w http.ResponseWriter, r *http.Request) {
	se, st := sessionOf(r), stateOf(r)
	if s.Setup == nil {
		s.writeSetup(w, se, http.StatusNotFound, "setup is off on this board", st)
		return
	}
	since, _ := strconv.ParseInt(st.Since, 10, 64)
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute))
	res := s.formCall(w, r, "setup/owner", map[string]any{"token": st.Token, "api_url": st.APIURL, "since": since})
	if !res.Failed {
		if id, ok := res.Fields["owner"].(int64); ok && id != 0 {
			st.Owner = strconv.FormatInt(id, 10)
		}
	}
	s.writeSetup(w, se, callStatus(res), res.Text, st)
}

// setupWrite writes the config (setup/write), which restarts the daemon.
func (s *Server) setupWrite(w http.ResponseWriter, r *http.Request) {
	se, st := sessionOf(r), stateOf(r)
	if s.Setup == nil {
		s.writeSetup(w, se, http.StatusNotFound, "setup is off on this board", st)
		return
	}
	f := func(k string) string { return strings.TrimSpace(r.PostFormValue(k)) }
	telegram := f("telegram") // keep | none | new
	if telegram == "new" {
		telegram = st.Token
	}
	owner, _ := strconv.ParseInt(f("owner"), 10, 64)
	args := map[string]any{"driver": f("driver"), "pins": f("pins"), "ports": f("ports"), "buses": f("buses"),
		"telegram": telegram, "api_url": st.APIURL, "owner": owner, "local": f("local"), "remote": f("remote")}
	if f("remote") == "set" {
		args["remote_name"], args["remote_kind"], args["remote_url"], args["remote_model"] = f("remote_name"), f("remote_kind"), f("remote_url"), f("remote_model")
		if key := f("remote_key"); key != "" {
			args["remote_key"] = s.Setup.Hold(key)
		}
	}
	started := s.Setup.Started()
	res := s.formCall(w, r, "setup/write", args)
	if res.Failed {
		s.writeSetup(w, se, callStatus(res), res.Text, st)
		return
	}
	var b htmlPage
	b.f(`<h1>Setup</h1>
<p id="written">%s</p>
<p id="restart" data-started="%s" aria-live="polite">The daemon restarts with the new config; this page follows it.</p>
<p><a href="/setup">Back to the setup page</a> (after the restart)</p>
<script src="/static/setup.js" defer></script>
`, res.Text, started.UTC().Format(time.RFC3339Nano))
	s.writeBody(w, "setup", se, http.StatusOK, "", b.String())
}

// writeSetup writes the setup page with note and what the steps learnt.
func (s *Server) writeSetup(w http.ResponseWriter, se session, status int, note string, st setupState) {
	var b htmlPage
	b.WriteString("<h1>Setup</h1>\n")
	if s.Setup == nil {
		b.WriteString("<p>Setup is off on this board.</p>\n")
		s.writeBody(w, "setup", se, status, note, b.String())
		return
	}
	v := s.Setup.Setup()
	if se.Role != Owner {
		b.WriteString(`<p class="hint">Only an owner's browser may change the setup: the board refuses (and records) any other.</p>` + "\n")
	}
	b.f(`<p>It writes <code>%s</code> (the previous one is kept as <code>%s.bak</code>) and restarts the daemon with it. Secrets go to <code>clawedge.env</code> beside it, never into the config.</p>
`, v.Config, v.Config)

	// Telegram: the token checked first, then the owner's /start.
	b.WriteString("<h2>Telegram</h2>\n")
	switch {
	case st.Owner != "":
		b.f(`<p id="tg-owner">The bot @%s answers; its owner is user %s.</p>`+"\n", st.Bot, st.Owner)
	case st.Bot != "":
		b.f(`<p id="tg-bot">The token works: this is @%s. Now send <code>/start</code> to @%s from your own Telegram account, then press Find me.</p>
<form method="post" action="/setup/owner" id="setup-owner"><input type="hidden" name="csrf" value="%s">`, st.Bot, st.Bot, se.CSRF)
		s.setupHidden(&b, st)
		b.WriteString("<button>Find me</button></form>\n")
	default:
		have := "No bot is configured."
		if v.Telegram {
			have = "A bot token is configured (it is not shown)."
		}
		b.f(`<p>%s</p>
<form method="post" action="/setup/telegram" id="setup-telegram"><input type="hidden" name="csrf" value="%s">
<label>Bot token from @BotFather <input type="password" name="token" autocomplete="off" required></label>
<label>Bot API server <input name="api_url" value="%s" inputmode="url"></label>
<button>Check the token</button></form>
`, have, se.CSRF, firstOf(st.APIURL, v.APIURL, "https://api.telegram.org"))
	}

	// The rest, in one form with what the steps learnt.
	b.f(`<h2>Board, models, Telegram's owner</h2>
<form method="post" action="/setup/write" id="setup-write"><input type="hidden" name="csrf" value="%s">
`, se.CSRF)
	s.setupHidden(&b, st)
	b.WriteString(`<p><label>Board driver <select name="driver">`)
	for _, d := range []string{"sim", "periph"} {
		b.f(`<option value="%s"%s>%s</option>`, d, selected(d == v.Driver), d)
	}
	b.f(`</select></label></p>
<p><label>Pins by name (name=GPIO:in|out, space separated) <input name="pins" value="%s" size="40"></label></p>
<p><label>Serial ports (name=/dev/ttyX:baud) <input name="ports" value="%s" size="40"></label></p>
<p><label>I2C buses (name=number) <input name="buses" value="%s" size="20"></label></p>
`, v.Pins, v.Ports, v.Buses)
	b.WriteString(`<p><label>Telegram <select name="telegram">`)
	if st.Token != "" && st.Bot != "" {
		b.f(`<option value="new" selected>the bot @%s just checked</option>`, st.Bot)
	}
	if v.Telegram {
		b.WriteString(`<option value="keep">keep the configured bot</option>`)
	}
	b.f(`<option value="none"%s>no Telegram</option></select></label></p>
<p><label>Owner's Telegram user id <input name="owner" inputmode="numeric" value="%s"></label></p>
`, selected(st.Token == "" && !v.Telegram), firstOf(st.Owner, ownerText(v.Owner)))
	b.f(`<p><label>Local model (%s available) <select name="local"><option value="none">none</option>`, v.Memory)
	if v.Local != "" {
		b.f(`<option value="keep" selected>keep %s</option>`, v.Local)
	}
	for _, m := range v.Models {
		state := "not downloaded: clawedge model pull " + m.Name
		if m.Installed {
			state = "downloaded"
		}
		b.f(`<option value="%s">%s (%s; %s)</option>`, m.Name, m.Name, m.About, state)
	}
	b.WriteString("</select></label></p>\n")
	if pl := v.Pull; pl != nil {
		state := "downloading"
		switch {
		case pl.Error != "":
			state = "failed: " + pl.Error
		case pl.Finished:
			state = "downloaded: choose it above"
		}
		b.f(`<p id="pull" data-finished="%t"><label>%s: %s <progress max="%d" value="%d"></progress></label> <span class="pulled">%s of %s</span></p>
<script src="/static/setup.js" defer></script>
`, pl.Finished || pl.Error != "", pl.Name, state, max(pl.Total, 1), pl.Done, byteText(pl.Done), byteText(pl.Total))
	}
	b.WriteString("<fieldset><legend>Remote model</legend>\n")
	if len(v.Remotes) > 0 {
		b.WriteString(`<ul id="remotes">`)
		for _, rm := range v.Remotes {
			b.f("<li>%s</li>", rm)
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString(`<p><label>Remote models <select name="remote">`)
	if len(v.Remotes) > 0 {
		b.WriteString(`<option value="keep" selected>keep these</option>`)
	}
	b.f(`<option value="none"%s>none</option><option value="set">this one (tried with a one-token request)</option></select></label></p>
<p><label>Name <input name="remote_name" value="lan"></label>
<label>Kind <select name="remote_kind"><option value="openai">openai (Ollama, llama-server, vLLM, OpenAI)</option><option value="anthropic">anthropic</option></select></label></p>
<p><label>Base URL <input name="remote_url" inputmode="url" placeholder="http://192.168.1.10:11434/v1"></label>
<label>Model <input name="remote_model" placeholder="qwen2.5:7b"></label>
<label>API key (none for a server without keys) <input type="password" name="remote_key" autocomplete="off"></label></p>
</fieldset>
<button>Write the config and restart</button></form>
`, selected(len(v.Remotes) == 0))
	var missing []SetupModel
	for _, m := range v.Models {
		if !m.Installed {
			missing = append(missing, m)
		}
	}
	if len(missing) > 0 && (v.Pull == nil || v.Pull.Finished || v.Pull.Error != "") {
		b.f(`<h2>Download a local model</h2>
<form method="post" action="/setup/pull" id="setup-pull"><input type="hidden" name="csrf" value="%s">
<label>Model that fits this board <select name="model">`, se.CSRF)
		for _, m := range missing {
			b.f(`<option value="%s">%s (%s)</option>`, m.Name, m.Name, m.About)
		}
		b.WriteString("</select></label> <button>Download</button></form>\n")
	}
	s.writeBody(w, "setup", se, status, note, b.String())
}

// setupHidden carries what the steps learnt in a form.
func (s *Server) setupHidden(b *htmlPage, st setupState) {
	for _, kv := range [][2]string{{"token_ref", st.Token}, {"bot", st.Bot}, {"api_url", st.APIURL}, {"since", st.Since}} {
		if kv[1] != "" {
			b.f(`<input type="hidden" name="%s" value="%s">`, kv[0], kv[1])
		}
	}
}

// byteText is n bytes for a person; "?" when unknown.
func byteText(n int64) string {
	switch {
	case n < 0:
		return "?"
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d KiB", n>>10)
}

func selected(on bool) string {
	if on {
		return " selected"
	}
	return ""
}

func ownerText(id int64) string {
	if id == 0 {
		return ""
	}
	return strconv.FormatInt(id, 10)
}

func firstOf(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}
