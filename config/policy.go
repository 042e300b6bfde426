package config

import (
	"math"
	"strconv"
	"time"

	"github.com/clawedge/clawedge/policy/vocab"
	"github.com/goccy/go-yaml/ast"
)

// Policy says what the agent may do with the tools: for each call a model proposes,
// allow (run it), deny (never run it; the model is told) or ask (run it only if a
// person approves in time). It governs the model only: a command a person types is
// governed by who may use the channel.
//
//	policy:
//	  default: allow            # for calls no rule below matches
//	  approval_timeout: 2m      # an unanswered ask is denied after this
//	  tools:
//	    gpio/write: ask
//	    "i2c/*": deny
//	  channels:                 # per channel, before the tool rules
//	    telegram: {"gpio/*": ask, gpio/read: allow}
//	    console: {"*": allow}   # console covers console/stdin and serial consoles
//
// A rule's key is a tool ("gpio/write"), a group ("group:readonly"), a
// namespace ("gpio/*") or every tool ("*"), as the policy's vocabulary
// (package vocab) defines them; the most specific rule wins.
type Policy struct {
	Default         string                       `yaml:"default"`
	ApprovalTimeout Duration                     `yaml:"approval_timeout"`
	Tools           map[string]string            `yaml:"tools"`
	Channels        map[string]map[string]string `yaml:"channels"`
	// The other layers are in policylayers.go.
	Profile     string                       `yaml:"profile"`
	Users       map[string]map[string]string `yaml:"users"`
	Automations map[string]map[string]string `yaml:"automations"`
	Elevated    []string                     `yaml:"elevated"`
	Owners      []string                     `yaml:"owners"`
}

// Agent bounds the agent's turns (a turn is everything done for one message).
//
//	agent:
//	  max_iterations: 10    # model steps that call tools, per message
//	  max_tokens: 48000     # prompt + reply tokens of all steps, per message
//	  max_time: 3m          # wall time per message, approvals included
//	  max_cost: 0.10        # per message, in the models' cost units; 0: no limit
//	  max_repeats: 2        # runs of one identical call per message
//	  reply_tokens: 512     # one model reply
//	  local_tools: 10       # tools offered to the local model at most
//	  calls_per_output: 4   # tool calls one model output may hold (parallel calls), 1 to 64
//	  tool_choice: auto     # auto | required (the first step of a turn must call a tool) | none
//	  think: false          # true: a thinking model (Qwen3) reasons before it answers (models.local.think_budget)
//	  history: 24           # messages kept per chat before older ones are summarized
//	  tool_output: {"*": 1500, serial/read: 4000}   # bytes of a result fed back
//	  system: "The relay opens the garage door."    # added to the system prompt
type Agent struct {
	MaxIterations  int      `yaml:"max_iterations"`
	MaxTokens      int      `yaml:"max_tokens"`
	MaxTime        Duration `yaml:"max_time"`
	MaxCost        float64  `yaml:"max_cost"`
	MaxRepeats     int      `yaml:"max_repeats"`
	ReplyTokens    int      `yaml:"reply_tokens"`
	LocalTools     int      `yaml:"local_tools"`
	CallsPerOutput int      `yaml:"calls_per_output"`
	History        int      `yaml:"history"`
	ToolChoice     string   `yaml:"tool_choice"`
	// Think lets a thinking model (Qwen3) reason in its <think> section
	// before it answers or calls; false (the default) asks it to answer at
	// once. The reasoning is never shown nor sent as the answer.
	Think      bool           `yaml:"think"`
	ToolOutput map[string]int `yaml:"tool_output"`
	System     string         `yaml:"system"`
}

var (
	policyKeys = []string{"default", "approval_timeout", "tools", "channels", "profile", "users", "automations", "elevated", "owners"}
	agentKeys  = []string{"max_iterations", "max_tokens", "max_time", "max_cost", "max_repeats", "reply_tokens",
		"local_tools", "calls_per_output", "history", "tool_output", "system", "tool_choice", "think"}
	toolChoices = []string{"auto", "required", "none"}
)

func defaultPolicy() Policy {
	return Policy{Default: "allow", ApprovalTimeout: Duration(2 * time.Minute), Profile: "full"}
}

func defaultAgent() Agent {
	return Agent{MaxIterations: 10, MaxTokens: 48000, MaxTime: Duration(3 * time.Minute), MaxRepeats: 2,
		ReplyTokens: 512, LocalTools: 10, CallsPerOutput: 4, History: 24, ToolChoice: "auto"}
}

func (d *decoder) policy(n ast.Node, p *Policy) {
	d.fields(n, "policy", policyKeys, func(k string, v ast.Node) {
		path := "policy." + k
		switch k {
		case "default":
			d.str(v, path, &p.Default)
		case "approval_timeout":
			d.duration(v, path, &p.ApprovalTimeout)
		case "tools":
			rules := map[string]string{}
			if d.rules(v, path, rules) {
				p.Tools = nilIfEmpty(rules)
			}
		case "channels":
			chans := map[string]map[string]string{}
			if d.entries(v, path, func(name string, v ast.Node) {
				rules := map[string]string{}
				d.rules(v, path+"."+name, rules)
				chans[name] = rules
			}) {
				p.Channels = nilIfEmpty(chans)
			}
		default:
			d.policyLayer(k, v, p) // policylayers.go
		}
	})
}

// rules decodes a mapping of tool patterns to actions.
func (d *decoder) rules(n ast.Node, path string, dst map[string]string) bool {
	return d.entries(n, path, func(pattern string, v ast.Node) {
		var a string
		d.str(v, path+"."+pattern, &a)
		dst[pattern] = a
	})
}

func (d *decoder) agent(n ast.Node, a *Agent) {
	d.fields(n, "agent", agentKeys, func(k string, v ast.Node) {
		path := "agent." + k
		switch k {
		case "max_iterations":
			d.intField(v, path, &a.MaxIterations)
		case "max_tokens":
			d.intField(v, path, &a.MaxTokens)
		case "max_time":
			d.duration(v, path, &a.MaxTime)
		case "max_cost":
			d.number(v, path, &a.MaxCost)
		case "max_repeats":
			d.intField(v, path, &a.MaxRepeats)
		case "reply_tokens":
			d.intField(v, path, &a.ReplyTokens)
		case "local_tools":
			d.intField(v, path, &a.LocalTools)
		case "calls_per_output":
			d.intField(v, path, &a.CallsPerOutput)
		case "history":
			d.intField(v, path, &a.History)
		case "tool_output":
			caps := map[string]int{}
			if d.entries(v, path, func(pattern string, v ast.Node) {
				var n int
				d.intField(v, path+"."+pattern, &n)
				caps[pattern] = n
			}) {
				a.ToolOutput = nilIfEmpty(caps)
			}
		case "system":
			d.str(v, path, &a.System)
		case "tool_choice":
			d.str(v, path, &a.ToolChoice)
		case "think":
			d.boolean(v, path, &a.Think)
		}
	})
}

func (d *decoder) validatePolicy(p *Policy, a *Agent) {
	d.oneOf("policy.default", p.Default, vocab.Actions)
	if p.ApprovalTimeout < Duration(time.Second) || p.ApprovalTimeout > Duration(24*time.Hour) {
		d.errf("policy.approval_timeout", "must be between 1s and 24h, found %s", p.ApprovalTimeout)
	}
	d.validateRules("policy.tools", p.Tools)
	d.validatePolicyLayers(p) // policylayers.go
	for _, ch := range byPosition(d, "policy.channels.", p.Channels) {
		path := "policy.channels." + ch
		if err := vocab.CheckChannel(ch); err != nil {
			d.add(d.keyAt(path), "policy.channels: %v", err)
			continue
		}
		d.validateRules(path, p.Channels[ch])
	}

	ints := []struct {
		key    string
		v      int
		lo, hi int
	}{
		{"max_iterations", a.MaxIterations, 1, 100},
		{"max_tokens", a.MaxTokens, 256, 10_000_000},
		{"max_repeats", a.MaxRepeats, 1, 100},
		{"reply_tokens", a.ReplyTokens, 16, 65536},
		{"local_tools", a.LocalTools, 1, 64},
		{"calls_per_output", a.CallsPerOutput, 1, 64},
		{"history", a.History, 2, 1000},
	}
	for _, f := range ints {
		if f.v < f.lo || f.v > f.hi {
			d.errf("agent."+f.key, "must be from %d to %d, found %d", f.lo, f.hi, f.v)
		}
	}
	d.oneOf("agent.tool_choice", a.ToolChoice, toolChoices)
	if a.MaxTime < Duration(time.Second) || a.MaxTime > Duration(24*time.Hour) {
		d.errf("agent.max_time", "must be between 1s and 24h, found %s", a.MaxTime)
	}
	if a.MaxCost < 0 || math.IsNaN(a.MaxCost) {
		d.errf("agent.max_cost", "must not be negative (0: no limit), found %s", formatNumber(a.MaxCost))
	}
	for _, pat := range byPosition(d, "agent.tool_output.", a.ToolOutput) {
		path := "agent.tool_output." + pat
		if err := vocab.CheckPattern(pat); err != nil {
			d.add(d.keyAt(path), "agent.tool_output: %v", err)
			continue
		}
		if vocab.Dynamic(pat) {
			// policy.Match reads these patterns without a running policy,
			// which alone knows such a group's members: it would match nothing.
			d.add(d.keyAt(path), "agent.tool_output: %s has members only a running policy knows: want ns/name, ns/*, * or a group of named tools", strconv.Quote(pat))
			continue
		}
		if n := a.ToolOutput[pat]; n < 64 || n > 1<<20 {
			d.errf(path, "must be from 64 to 1048576 bytes, found %d", n)
		}
	}
}

func (d *decoder) validateRules(path string, rules map[string]string) {
	for _, pat := range byPosition(d, path+".", rules) {
		p := path + "." + pat
		if err := vocab.CheckPattern(pat); err != nil {
			d.add(d.keyAt(p), "%s: %v", path, err)
			continue
		}
		d.oneOf(p, rules[pat], vocab.Actions)
	}
}

// writePolicy writes the policy and agent sections for Redacted.
func (c *Config) writePolicy(w *writer) {
	p := c.Policy
	w.key(0, "policy")
	w.kv(1, "default", w.str(p.Default))
	w.kv(1, "approval_timeout", p.ApprovalTimeout.String())
	writeRules := func(level int, key string, rules map[string]string) {
		if len(rules) == 0 {
			w.kv(level, key, "{}")
			return
		}
		w.key(level, key)
		for _, pat := range sortedKeys(rules) {
			w.kv(level+1, yamlKey(pat), w.str(rules[pat]))
		}
	}
	if len(p.Tools) > 0 {
		writeRules(1, "tools", p.Tools)
	}
	if len(p.Channels) > 0 {
		w.key(1, "channels")
		for _, ch := range sortedKeys(p.Channels) {
			writeRules(2, yamlKey(ch), p.Channels[ch])
		}
	}
	c.writePolicyLayers(w, writeRules) // policylayers.go
	a := c.Agent
	w.key(0, "agent")
	w.kv(1, "max_iterations", strconv.Itoa(a.MaxIterations))
	w.kv(1, "max_tokens", strconv.Itoa(a.MaxTokens))
	w.kv(1, "max_time", a.MaxTime.String())
	w.kv(1, "max_cost", formatNumber(a.MaxCost))
	w.kv(1, "max_repeats", strconv.Itoa(a.MaxRepeats))
	w.kv(1, "reply_tokens", strconv.Itoa(a.ReplyTokens))
	w.kv(1, "local_tools", strconv.Itoa(a.LocalTools))
	w.kv(1, "calls_per_output", strconv.Itoa(a.CallsPerOutput))
	w.kv(1, "history", strconv.Itoa(a.History))
	w.kv(1, "tool_choice", w.str(a.ToolChoice))
	w.kv(1, "think", strconv.FormatBool(a.Think))
	if len(a.ToolOutput) > 0 {
		w.key(1, "tool_output")
		for _, pat := range sortedKeys(a.ToolOutput) {
			w.kv(2, yamlKey(pat), strconv.Itoa(a.ToolOutput[pat]))
		}
	}
	w.kvOmit(1, "system", a.System)
}
