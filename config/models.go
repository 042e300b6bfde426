package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// The models section: the local model, the remote providers and the router
// that chooses between them (docs/remote-models.md).
//
//	models:
//	  local:  {path: ./data/models/qwen2.5-0.5b-instruct-q4_k_m.gguf, threads: 4, context: 4096}
//	  remote:
//	    - {name: lan, kind: openai, base_url: http://192.168.1.10:11434/v1, model: qwen2.5:7b}
//	  router: {strategy: local-first}
//
// Decoding, validation and the Redacted writer of the section are all in
// this file.

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
	// ThinkBudget bounds a thinking model's reasoning, in tokens, when
	// agent.think lets it think: the runner closes its <think> section
	// there and the answer follows. There is no "unlimited": on a board a
	// model left to reason can spend minutes and the whole reply on it.
	ThinkBudget int `yaml:"think_budget"`
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

// Defaults inside a models section the file introduces.
const (
	defaultStrategy   = "local-first"
	defaultThreads    = 4
	defaultContext    = 4096
	defaultIdleUnload = Duration(10 * time.Minute)
	// defaultThinkBudget leaves half of agent.reply_tokens' default (512)
	// to the answer: about half a minute of reasoning on a Pi-class board.
	defaultThinkBudget = 256
	maxThinkBudget     = 32768
	minThinkBudget     = 16
	defaultScore       = 5
	// defaultTemperature is what remote models are sampled at unless the
	// config says otherwise: Qwen2.5's recommended value, as the local model.
	defaultTemperature = 0.7
	anthropicURL       = "https://api.anthropic.com"
)

// defaultModels has no model; the router puts the local model first.
func defaultModels() Models { return Models{Router: Router{Strategy: defaultStrategy}} }

// The keys of the section and the values they take.
var (
	modelsKeys = []string{"local", "remote", "router"}
	localKeys  = []string{"path", "threads", "context", "template", "think_budget", "idle_unload", "quality", "speed"}
	remoteKeys = []string{"name", "kind", "base_url", "model", "api_key", "context", "cost_in", "cost_out",
		"quality", "speed", "tools", "constraint", "timeout", "temperature", "seed"}
	routerKeys = []string{"strategy", "order", "local_queue_budget"}
	kinds      = []string{"openai", "anthropic"}
	// openAICompatible are servers refused as a kind with the hint to write
	// openai: one spelling per API keeps the config's meaning plain.
	openAICompatible = []string{"ollama", "llama-server", "llama.cpp", "llamacpp", "vllm", "lmstudio", "localai"}
	templates        = []string{"qwen2", "qwen2.5", "qwen3"} // localmodel/chat.Families
	strategies       = []string{"local-first", "quality", "speed", "cost", "balanced", "fallback", "cascade"}
	// constraints are how an openai-kind server is asked to constrain
	// its reply (llm/openai). strategies above are llm/router.Strategies.
	constraints = []string{"none", "gbnf", "json_schema", "ollama"}
)

func (d *decoder) models(n ast.Node, m *Models) {
	d.fields(n, "models", modelsKeys, func(k string, v ast.Node) {
		switch k {
		case "local":
			l := &LocalModel{Threads: defaultThreads, Context: defaultContext, ThinkBudget: defaultThinkBudget,
				IdleUnload: defaultIdleUnload, Quality: defaultScore, Speed: defaultScore}
			present := !isNull(d.resolveQuiet(v))
			d.fields(v, "models.local", localKeys, func(k string, v ast.Node) {
				switch k {
				case "path":
					d.str(v, "models.local.path", &l.Path)
				case "threads":
					d.intField(v, "models.local.threads", &l.Threads)
				case "context":
					d.intField(v, "models.local.context", &l.Context)
				case "template":
					d.str(v, "models.local.template", &l.Template)
				case "think_budget":
					d.intField(v, "models.local.think_budget", &l.ThinkBudget)
				case "idle_unload":
					d.duration(v, "models.local.idle_unload", &l.IdleUnload)
				case "quality":
					d.number(v, "models.local.quality", &l.Quality)
				case "speed":
					d.number(v, "models.local.speed", &l.Speed)
				}
			})
			if present {
				m.Local = l
			}
		case "remote":
			var list []RemoteModel
			if d.items(v, "models.remote", func(i int, v ast.Node) {
				r := RemoteModel{Quality: defaultScore, Speed: defaultScore, Tools: true, Temperature: defaultTemperature}
				path := fmt.Sprintf("models.remote[%d]", i)
				d.fields(v, path, remoteKeys, func(k string, v ast.Node) {
					switch k {
					case "name":
						d.str(v, path+".name", &r.Name)
					case "kind":
						d.str(v, path+".kind", &r.Kind)
					case "base_url":
						d.str(v, path+".base_url", &r.BaseURL)
					case "model":
						d.str(v, path+".model", &r.Model)
					case "api_key":
						d.secret(v, path+".api_key", &r.APIKey)
					case "context":
						d.intField(v, path+".context", &r.Context)
					case "cost_in":
						d.number(v, path+".cost_in", &r.CostIn)
					case "cost_out":
						d.number(v, path+".cost_out", &r.CostOut)
					case "quality":
						d.number(v, path+".quality", &r.Quality)
					case "speed":
						d.number(v, path+".speed", &r.Speed)
					case "tools":
						d.boolean(v, path+".tools", &r.Tools)
					case "constraint":
						d.str(v, path+".constraint", &r.Constraint)
					case "timeout":
						d.duration(v, path+".timeout", &r.Timeout)
					case "temperature":
						d.number(v, path+".temperature", &r.Temperature)
					case "seed":
						if s, ok := d.integer(v, path+".seed", 0, math.MaxInt64); ok {
							r.Seed = uint64(s)
						}
					}
				})
				if r.Kind == "anthropic" && !d.has(path+".base_url") && !d.failed[path+".base_url"] {
					r.BaseURL = anthropicURL
				}
				list = append(list, r)
			}) {
				m.Remote = list
			}
		case "router":
			d.fields(v, "models.router", routerKeys, func(k string, v ast.Node) {
				switch k {
				case "strategy":
					d.str(v, "models.router.strategy", &m.Router.Strategy)
				case "order":
					var order []string
					if d.items(v, "models.router.order", func(i int, v ast.Node) {
						var s string
						d.str(v, fmt.Sprintf("models.router.order[%d]", i), &s)
						order = append(order, s)
					}) {
						m.Router.Order = order
					}
				case "local_queue_budget":
					d.duration(v, "models.router.local_queue_budget", &m.Router.LocalQueueBudget)
				}
			})
		}
	})
}

// validateModels checks the section; a is the agent's, whose reply bounds the
// local model's thinking.
func (d *decoder) validateModels(m *Models, a *Agent) {
	if l := m.Local; l != nil {
		const path = "models.local"
		if l.Path == "" {
			if d.has(path + ".path") {
				d.errf(path+".path", "must not be empty")
			} else {
				d.missing(path+".path", " (the GGUF model file)")
			}
		}
		if l.Threads < 1 {
			d.errf(path+".threads", "must be at least 1, found %d", l.Threads)
		}
		if l.Context < 1 {
			d.errf(path+".context", "must be at least 1, found %d", l.Context)
		}
		if d.has(path + ".template") {
			d.oneOf(path+".template", l.Template, templates)
		}
		d.validateThinkBudget(l, a)
		if l.IdleUnload < 0 {
			d.errf(path+".idle_unload", "must not be negative (0 keeps the model loaded), found %s", l.IdleUnload)
		}
		d.checkScore(path+".quality", l.Quality)
		d.checkScore(path+".speed", l.Speed)
	}

	names := map[string]int{}
	for i, r := range m.Remote {
		path := fmt.Sprintf("models.remote[%d]", i)
		if d.failed[path] {
			continue
		}
		if r.Name == "" {
			d.required(path, "name", ` (how the router and logs refer to it)`)
		} else if r.Name == "local" {
			d.errf(path+".name", `"local" is the name of the local model (models.local); choose another`)
		} else if j, dup := names[r.Name]; dup {
			d.errf(path+".name", "duplicate name %s (also models.remote[%d])", d.quote(path+".name", r.Name), j)
		} else {
			names[r.Name] = i
		}
		switch {
		case r.Kind == "":
			d.required(path, "kind", " (openai or anthropic)")
		case slices.Contains(openAICompatible, r.Kind):
			// The servers people name instead of the API they speak.
			d.errf(path+".kind", "%s serves the OpenAI-compatible API: write kind: openai, with base_url http://HOST:PORT/v1 (docs/remote-models.md)", d.quote(path+".kind", r.Kind))
		default:
			d.oneOf(path+".kind", r.Kind, kinds)
		}
		if r.Model == "" {
			d.required(path, "model", " (the provider's model id)")
		}
		if r.Kind == "anthropic" && r.APIKey == "" && !d.failed[path+".api_key"] {
			d.required(path, "api_key", " for kind anthropic (the Anthropic API takes no request without one)")
		}
		switch {
		case r.Kind == "openai" && r.BaseURL == "" && !d.failed[path+".base_url"]:
			d.required(path, "base_url", " for kind openai (the server's endpoint, such as http://192.168.1.10:11434/v1)")
		case d.has(path + ".base_url"):
			d.checkURL(path+".base_url", r.BaseURL)
		}
		if d.has(path+".context") && r.Context < 1 {
			d.errf(path+".context", "must be at least 1, found %d (leave context out if the window is not known)", r.Context)
		}
		for _, c := range []struct {
			key string
			v   float64
		}{{"cost_in", r.CostIn}, {"cost_out", r.CostOut}} {
			if c.v < 0 {
				d.errf(path+"."+c.key, "must not be negative (a cost per 1,000 tokens), found %g", c.v)
			}
		}
		d.checkScore(path+".quality", r.Quality)
		d.checkScore(path+".speed", r.Speed)
		if d.has(path + ".constraint") {
			if r.Kind == "anthropic" {
				d.errf(path+".constraint", "applies to kind openai only: the Anthropic API takes no grammar or schema")
			} else {
				d.oneOf(path+".constraint", r.Constraint, constraints)
			}
		}
		if r.Temperature < 0 || r.Temperature > 2 {
			d.errf(path+".temperature", "must be from 0 (greedy) to 2, found %g", r.Temperature)
		}
		if d.has(path+".seed") && r.Kind == "anthropic" {
			d.errf(path+".seed", "applies to kind openai only: the Anthropic API takes no seed")
		}
		if d.has(path+".timeout") && r.Timeout <= 0 {
			d.errf(path+".timeout", "must be greater than zero (leave timeout out for the provider's default), found %s", r.Timeout)
		}
	}

	d.oneOf("models.router.strategy", m.Router.Strategy, strategies)
	known := []string{}
	if m.Local != nil {
		known = append(known, "local")
	}
	for _, r := range m.Remote {
		if r.Name != "" && r.Name != "local" {
			known = append(known, r.Name)
		}
	}
	seen := map[string]int{}
	for i, name := range m.Router.Order {
		path := fmt.Sprintf("models.router.order[%d]", i)
		if d.failed[path] {
			continue
		}
		switch j, dup := seen[name]; {
		case !slices.Contains(known, name):
			models := "none are configured"
			if len(known) > 0 {
				models = "models: " + strings.Join(known, ", ")
			}
			d.errf(path, "%s is not a configured model (%s)", d.quote(path, name), models)
		case dup:
			d.errf(path, "%s is already listed (models.router.order[%d])", d.quote(path, name), j)
		default:
			seen[name] = i
		}
	}
	if m.Router.LocalQueueBudget < 0 {
		d.errf("models.router.local_queue_budget", "must not be negative (0 waits for the local model), found %s", m.Router.LocalQueueBudget)
	}
}

// validateThinkBudget checks models.local.think_budget: bounded, and with
// agent.think on below agent.reply_tokens, which bounds the whole reply,
// reasoning included, so that an answer can follow the reasoning.
func (d *decoder) validateThinkBudget(l *LocalModel, a *Agent) {
	const path = "models.local.think_budget"
	switch {
	case l.ThinkBudget < minThinkBudget || l.ThinkBudget > maxThinkBudget:
		d.errf(path, "must be from %d to %d tokens (agent.think: false turns thinking off), found %d", minThinkBudget, maxThinkBudget, l.ThinkBudget)
	case !a.Think || l.ThinkBudget < a.ReplyTokens:
	case d.has(path):
		d.errf(path, "must be below agent.reply_tokens (%d), which bounds the whole reply, reasoning included, found %d", a.ReplyTokens, l.ThinkBudget)
	default:
		d.errf("agent.reply_tokens", "must be above models.local.think_budget (%d by default) when agent.think is true: it bounds the whole reply, reasoning included, found %d", l.ThinkBudget, a.ReplyTokens)
	}
}

// checkScore checks a router score, when the file sets it.
func (d *decoder) checkScore(path string, v float64) {
	if d.has(path) && (v < 1 || v > 10) {
		d.errf(path, "must be from 1 to 10 (10 best), found %g", v)
	}
}

// secretValues are the remote models' API keys, scrubbed from every other
// field by Redacted.
func (m *Models) secretValues() []string {
	var s []string
	for _, r := range m.Remote {
		s = append(s, r.APIKey.Reveal())
	}
	return s
}

// writeModels writes the models section for Redacted.
func (c *Config) writeModels(w *writer) {
	w.key(0, "models")
	if l := c.Models.Local; l != nil {
		w.key(1, "local")
		w.kv(2, "path", w.str(l.Path))
		w.kv(2, "threads", strconv.Itoa(l.Threads))
		w.kv(2, "context", strconv.Itoa(l.Context))
		w.kvOmit(2, "template", l.Template)
		w.kv(2, "think_budget", strconv.Itoa(l.ThinkBudget))
		w.kv(2, "idle_unload", l.IdleUnload.String())
		w.kv(2, "quality", formatNumber(l.Quality))
		w.kv(2, "speed", formatNumber(l.Speed))
	}
	if len(c.Models.Remote) > 0 {
		w.key(1, "remote")
		for _, r := range c.Models.Remote {
			w.line(2, "- name: "+w.str(r.Name))
			w.kv(3, "kind", w.str(r.Kind))
			w.kvOmit(3, "base_url", r.BaseURL)
			w.kv(3, "model", w.str(r.Model))
			if r.APIKey != "" {
				w.kv(3, "api_key", yamlString(r.APIKey.String()))
			}
			if r.Context != 0 {
				w.kv(3, "context", strconv.Itoa(r.Context))
			}
			if r.CostIn != 0 || r.CostOut != 0 {
				w.kv(3, "cost_in", formatNumber(r.CostIn))
				w.kv(3, "cost_out", formatNumber(r.CostOut))
			}
			w.kv(3, "quality", formatNumber(r.Quality))
			w.kv(3, "speed", formatNumber(r.Speed))
			w.kv(3, "tools", strconv.FormatBool(r.Tools))
			w.kvOmit(3, "constraint", r.Constraint)
			if r.Timeout != 0 {
				w.kv(3, "timeout", r.Timeout.String())
			}
			w.kv(3, "temperature", formatNumber(r.Temperature))
			if r.Seed != 0 {
				w.kv(3, "seed", strconv.FormatUint(r.Seed, 10))
			}
		}
	}
	w.key(1, "router")
	w.kv(2, "strategy", w.str(c.Models.Router.Strategy))
	if len(c.Models.Router.Order) > 0 {
		w.key(2, "order")
		for _, name := range c.Models.Router.Order {
			w.item(3, w.str(name))
		}
	}
	w.kv(2, "local_queue_budget", c.Models.Router.LocalQueueBudget.String())
}
