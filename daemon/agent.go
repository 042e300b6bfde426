package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
)

// loopAgent puts the agent loop behind the channels' Agent interface. The message's
// own facts go with it: its audit scope (Telegram's, tied to the inbox item) and
// where to ask its sender about a call (Telegram's buttons in their chat).
type loopAgent struct {
	a     *agent.Agent
	after func() // after each turn (saving the model totals)
}

func (l loopAgent) Reply(ctx context.Context, msg channels.Message) (string, error) {
	return l.ReplyStream(ctx, msg, nil)
}

func (l loopAgent) ReplyStream(ctx context.Context, msg channels.Message, emit func(string)) (string, error) {
	out, err := l.a.Turn(ctx, agent.In{Channel: msg.Channel, User: msg.User, Text: msg.Text,
		Audit: msg.Audit, Asker: msg.Asker, Creator: msg.Creator, Emit: emit})
	if l.after != nil {
		l.after()
	}
	if err == nil && out.State == agent.Error {
		err = channels.ErrTurnFailed
	}
	return out.Text, err
}

var _ channels.StreamAgent = loopAgent{}

// brokenAgent answers every message with why the model cannot be used, so a
// daemon with a bad models section still runs commands.
type brokenAgent struct{ err error }

func (a brokenAgent) Reply(context.Context, channels.Message) (string, error) { return "", a.err }

// PromptCacheDir is the folder of data_dir where the runner saves the KV state
// of the system prompt and tools.
const PromptCacheDir = "prompt-cache"

// localClient makes the runner client of a models.local section.
// The runner and the model must be files no other user can replace: the runner
// runs as clawedge's user, and a crafted model is parsed by C++.
func localClient(l *config.LocalModel, a *Core) (*localmodel.Client, error) {
	opts := localmodel.Options{
		Model: l.Path, Threads: l.Threads, Context: l.Context, Template: l.Template, ThinkBudget: l.ThinkBudget,
		IdleUnload: time.Duration(l.IdleUnload), Log: a.log,
	}
	// The fixed prompt prefix's KV state lives in data_dir, in a folder of
	// its own: the one place the sandboxed runner may write.
	var cacheDir string
	if a.cfg != nil && a.cfg.DataDir != "" {
		dir := filepath.Join(a.cfg.DataDir, PromptCacheDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			a.log.Warn("local model: no saved prompt prefix", "err", err)
		} else {
			cacheDir = dir
			opts.PrefixCache = filepath.Join(dir, "prefix.kv")
		}
	}
	opts.Command = ConfineRunner(l.Path, cacheDir, a.warn) // runnerbox.go
	if _, err := os.Stat(l.Path); err == nil {
		if err := store.CheckTrusted(l.Path); err != nil {
			return nil, fmt.Errorf("local model: %w", err)
		}
	}
	if runner, err := localmodel.FindRunner(); err == nil { // else the first request says it is missing
		if err := store.CheckTrusted(runner); err != nil {
			return nil, fmt.Errorf("local model runner: %w", err)
		}
		opts.Runner = runner
	}
	return localmodel.New(opts)
}

// budget is a recall budget of the config for the agent, where 0 is its
// default and a negative budget recalls nothing.
func budget(tokens int) int {
	if tokens == 0 {
		return -1
	}
	return tokens
}

// limitsOf converts the config's agent section.
func limitsOf(c *config.Config) agent.Limits {
	g := c.Agent
	return agent.Limits{
		MaxIterations: g.MaxIterations, MaxTokens: g.MaxTokens, MaxTime: time.Duration(g.MaxTime),
		MaxCost: g.MaxCost, MaxRepeats: g.MaxRepeats, ToolOutput: g.ToolOutput, ReplyTokens: g.ReplyTokens,
		LocalTools: g.LocalTools, CallsPerOutput: g.CallsPerOutput, History: g.History, ToolChoice: toolChoiceOf(g.ToolChoice), ApprovalTimeout: time.Duration(c.Policy.ApprovalTimeout),
	}
}

// toolChoiceOf maps agent.tool_choice (auto, required, none; config checks
// it) onto the request's.
func toolChoiceOf(c string) llm.ToolChoice {
	if c == "auto" {
		return llm.ToolChoiceAuto
	}
	return llm.ToolChoice(c)
}

// dispatcher is the Dispatcher every channel of a shares. With a model configured,
// free text goes to the agent loop; without one it gets NoModelReply. A models
// section that cannot be used leaves commands working and answers free text with
// the reason.
func (a *Core) dispatcher() *channels.Dispatcher {
	d := &channels.Dispatcher{Runner: a.runner, Elevation: a.policy(), Approvals: a.authorizer()}
	p, compact, window, err := a.models()
	if err != nil {
		a.log.Error("the models cannot be used; free text will get this error", "err", err)
		d.Agent = brokenAgent{fmt.Errorf("the model cannot be used: %w", err)}
		return d
	}
	if p == nil {
		return d
	}
	opt := agent.Options{
		Provider: p, Runner: a.runner, Store: a.store, Policy: a.policy(), Approvals: a.authorizer().Approvals,
		Limits: limitsOf(a.cfg), System: a.skillsSystem(), Think: a.cfg.Agent.Think, Log: a.log,
		Compact: compact, Window: window, Redelivers: []string{telegram.ChannelName},
	}
	if a.mem != nil {
		m := a.cfg.Memory
		opt.Memory = &memory.Prompt{W: a.mem, PersonaTokens: m.PersonaTokens, Log: a.log}
		opt.RecallTokens, opt.LocalRecallTokens = budget(m.RecallTokens), budget(m.LocalRecallTokens)
	}
	ag, err := agent.New(opt)
	if err != nil {
		d.Agent = brokenAgent{err}
		return d
	}
	// Sessions a stop or crash interrupted mid-turn: halted, with a notice for their
	// next message. The store has already marked their unfinished calls interrupted
	// (serve runs store.Interrupted first); nothing is run again.
	notices, err := ag.Recover()
	if err != nil {
		a.log.Error("agent: recovering sessions", "err", err)
	}
	for _, n := range notices {
		a.log.Warn("agent: a turn was interrupted by the last stop; the person is told at their next message", "notice", n)
	}
	a.agent = ag
	d.Agent = loopAgent{a: ag, after: a.saveTotals}
	return d
}

// announceApproval tells the people at the board about a call waiting for them. A
// request from the stdin console was already shown there, in its answer.
func (a *Core) announceApproval(p policy.Pending) {
	a.log.Warn("a call waits for approval", "id", p.ID, "call", p.Call, "channel", p.Channel, "user", p.User,
		"until", p.Deadline.Format(time.RFC3339))
	if a.cfg.ConsoleStdin() && a.serving && p.Channel != "console/stdin" {
		fmt.Fprintf(os.Stdout, "Approval needed [%s]: %s (asked by %s on %s). Type: approve %s  or  deny %s\n",
			p.ID, p.Call, p.User, p.Channel, p.ID, p.ID)
	}
}
