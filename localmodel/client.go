// Package localmodel runs local GGUF models for the core, which is pure Go:
// the model itself runs in the runner process clawedge-llm (cgo, llama.cpp),
// which the Client starts, feeds over the framed protocol of package wire,
// supervises and stops. A model that runs out of memory kills the runner,
// never the agent.
//
// The Client is an llm.Provider. It starts the runner on first use, refuses
// before loading a model that cannot fit in the memory available (the error
// wraps llm.ErrCapacity), restarts the runner after a crash with a growing
// delay (the request in flight fails with an error naming the cause and
// wrapping llm.ErrUnavailable; the next one starts a new runner), and stops it
// after an idle time to give the memory back. One generation runs at a time;
// other callers queue, each until its context ends.
package localmodel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/chat"
	"github.com/clawedge/clawedge/localmodel/gguf"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// Options configure a Client; only Model is required.
type Options struct {
	Model string // the GGUF file
	// Runner is the clawedge-llm executable; "" looks beside this
	// executable, then on PATH.
	Runner  string
	Threads int // 0: the runner's default
	// Context is the context window in tokens; 0 is the model's own,
	// capped at DefaultContext.
	Context int
	// Template names the chat format (qwen2, qwen2.5, qwen3); "" reads it
	// from the model file.
	Template string
	// ThinkBudget closes a thinking model's <think> section after this many
	// tokens when the reply is constrained (the runner writes </think> and
	// the constrained answer follows); 0: no limit.
	ThinkBudget int
	// IdleUnload stops the runner after this long without a request;
	// 0 keeps it.
	IdleUnload time.Duration
	// MemInfo is where MemAvailable is read; "" is /proc/meminfo. If it
	// cannot be read the memory check is skipped.
	MemInfo string
	// Backoff is the delay before restarting a runner that crashed; it
	// doubles with each crash in a row up to MaxBackoff. 0: 500ms.
	Backoff time.Duration
	// PrefixCache is the file where the runner keeps the KV state of the
	// prompt's start (the system turn and the conversation's earlier
	// turns, prefix.go), so that the first reply after a restart or a boot
	// prefills only what is new; "" keeps none. Its folder must exist and
	// the runner must be allowed to write there.
	PrefixCache string
	// PrefixCacheMax bounds that file; 0: DefaultPrefixCacheMax.
	PrefixCacheMax int64
	// PrefixReplace is how long a saved prefix is kept before the prompt
	// of another conversation or system turn may replace it (each
	// replacement writes the whole state to flash; the conversation it
	// holds going on replaces it at once); 0: DefaultPrefixReplace.
	PrefixReplace time.Duration
	Env           []string // added to the runner's environment
	// Command makes the runner's Cmd (the caller confines it: a sandbox
	// with the model file read-only, no network, a memory limit); nil runs
	// it directly with this process's environment and Env.
	Command func(runner string, env []string) (*exec.Cmd, error)
	Log     *slog.Logger
}

const (
	DefaultContext   = 4096
	DefaultMaxTokens = 1024 // a reply's length when the request sets none
	// A 1.5B Qwen2.5 holds 28 KiB of KV per token, a Qwen3 of 0.6-1.7B
	// 112 KiB: 1,300 tokens of system prompt and tools are 37 and 146 MB.
	DefaultPrefixCacheMax = 256 << 20
	DefaultPrefixReplace  = 10 * time.Minute
	MaxBackoff            = 30 * time.Second
	stopGrace             = 5 * time.Second
)

// Client is the local model provider.
type Client struct {
	opts Options
	// need is the memory estimate, made once from the header in New: the
	// parsed header is not kept, since its vocabulary (151,936 tokens and
	// as many merges in Qwen's) would hold some 14 MB of heap in the core
	// for a model that runs in the runner.
	need    Memory
	needErr error
	tmpl    chat.Template
	ctx     int
	log     *slog.Logger

	slot chan struct{} // holds a token while a generation (or a start) runs

	mu        sync.Mutex
	run       *runner // nil when no runner is running
	model     *wire.Model
	crashes   int // in a row
	lastCrash time.Time
	starts    int
	idle      *time.Timer
	lastUse   time.Time
	closed    bool
	last      *llm.Final // of the last finished generation

	prefix savedPrefix // what the runner's saved prompt state should hold (prefix.go)
}

// New reads the model file's header and chooses its chat template. It does
// not start the runner: that happens on the first request.
func New(opts Options) (*Client, error) {
	if opts.Model == "" {
		return nil, errors.New("local model: no model file")
	}
	abs, err := filepath.Abs(opts.Model)
	if err != nil {
		return nil, err
	}
	opts.Model = abs
	// The tokenizer's arrays (14 MB decoded for Qwen) are the runner's
	// business: the core needs only the small metadata.
	f, err := gguf.OpenWith(opts.Model, gguf.Options{SkipArraysOver: gguf.SmallArray})
	if err != nil {
		return nil, fmt.Errorf("local model: %w", err)
	}
	tmpl, err := chat.ForModel(f, opts.Template)
	if err != nil {
		return nil, fmt.Errorf("local model %s: %w", filepath.Base(opts.Model), err)
	}
	if opts.MemInfo == "" {
		opts.MemInfo = "/proc/meminfo"
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	if opts.PrefixCacheMax <= 0 {
		opts.PrefixCacheMax = DefaultPrefixCacheMax
	}
	if opts.PrefixReplace <= 0 {
		opts.PrefixReplace = DefaultPrefixReplace
	}
	c := &Client{opts: opts, tmpl: tmpl, ctx: opts.Context, log: opts.Log, slot: make(chan struct{}, 1),
		prefix: savedPrefix{replace: opts.PrefixReplace}}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.ctx <= 0 {
		c.ctx = DefaultContext
		if n, ok := f.ContextLength(); ok && n > 0 && n < DefaultContext {
			c.ctx = int(n)
		}
	}
	c.need, c.needErr = EstimateMemory(f, c.ctx)
	return c, nil
}

// Name is the provider's name for routes and logs.
func (c *Client) Name() string { return "local" }

// Caps of the local model.
func (c *Client) Caps() llm.Caps {
	return llm.Caps{Context: c.ctx, Local: true, Tools: true, Grammar: true} // the runner masks tokens by the request's Constraint
}

// Template is the chat template in use.
func (c *Client) Template() chat.Template { return c.tmpl }

// Chat renders the conversation with the model's template and generates the
// reply; the calls the model writes come back parsed, in Final.ToolCalls.
func (c *Client) Chat(ctx context.Context, req llm.Request) (llm.Stream, error) {
	prompt, layout, err := c.tmpl.RenderLayout(req)
	if err != nil {
		return nil, err
	}
	req.Constraint = thinking(c.tmpl, req)
	comp := Completion{Prompt: prompt, MaxTokens: req.MaxTokens, Sampling: req.Sampling, Stop: req.Stop, Constraint: req.Constraint}
	if c.opts.PrefixCache != "" {
		comp.Fixed = c.prefix.fixed(prompt, layout, time.Now())
	}
	if comp.Constraint != nil && comp.Constraint.Think {
		comp.ThinkBudget = c.opts.ThinkBudget
	}
	s, err := c.Complete(ctx, comp)
	if err != nil {
		return nil, err
	}
	// Parsed with the same spec: a call written while thinking is not a call,
	// and the reasoning is not the answer.
	return llm.ReplyCalls(s, req), nil
}

// thinking is the request's constraint, letting a thinking model (Qwen3, not
// told NoThink) reason freely in its <think> section before the constraint
// applies. A request without one gets one that holds nothing but the answer
// to text and the form's calls, so that the think budget applies there too and
// the reasoning is told from the answer.
func thinking(t chat.Template, req llm.Request) *grammar.Spec {
	if t.Family != chat.Qwen3 || req.NoThink {
		return req.Constraint
	}
	spec := grammar.Spec{Form: llm.TextForm, Mode: grammar.ModeAny}
	if req.Constraint != nil {
		spec = *req.Constraint
	}
	spec.Think = true
	return &spec
}

// Completion is a raw prompt to continue, special tokens (<|im_start|>) and all.
type Completion struct {
	Prompt    string
	MaxTokens int           // 0: DefaultMaxTokens; below 0: until the model stops or the context is full
	Sampling  *llm.Sampling // nil: Qwen's recommended settings with a random seed
	Stop      []string
	// Constraint limits the output to what the spec allows (the runner
	// masks tokens with its compiled automaton); nil: free output.
	Constraint *grammar.Spec
	// ThinkBudget closes an open <think> section after this many tokens
	// (wire.Generate.ThinkBudget); 0: no limit.
	ThinkBudget int
	// Fixed is how many bytes at the start of Prompt the next prompts start
	// with too, whose state the runner saves (wire.Generate.Prefix); 0:
	// none.
	Fixed int
}

// Complete continues a raw prompt.
func (c *Client) Complete(ctx context.Context, comp Completion) (llm.Stream, error) {
	select {
	case c.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("local model: waiting for the model: %w", ctx.Err())
	}
	s, err := c.start(ctx, comp)
	if err != nil {
		c.release(false)
		return nil, err
	}
	return s, nil
}

func (c *Client) start(ctx context.Context, comp Completion) (*stream, error) {
	r, err := c.ensure(ctx)
	if err != nil {
		return nil, err
	}
	g := &wire.Generate{Prompt: comp.Prompt, MaxTokens: comp.MaxTokens, Stop: comp.Stop, Constraint: comp.Constraint,
		ThinkBudget: comp.ThinkBudget, Prefix: comp.Fixed}
	switch {
	case g.MaxTokens == 0:
		g.MaxTokens = DefaultMaxTokens
	case g.MaxTokens < 0:
		g.MaxTokens = 0
	}
	if s := comp.Sampling; s != nil {
		g.Sampling = wire.Sampling{Temperature: s.Temperature, TopK: s.TopK, TopP: s.TopP, MinP: s.MinP,
			RepeatPenalty: s.RepeatPenalty, Seed: s.Seed}
	} else {
		// Qwen2.5's generation_config.json.
		g.Sampling = wire.Sampling{Temperature: 0.7, TopK: 20, TopP: 0.8, RepeatPenalty: 1.05,
			Seed: uint64(time.Now().UnixNano())}
	}
	id, ch, err := r.send(wire.Request{Op: wire.OpGenerate, Generate: g})
	if err != nil {
		c.crashed(r)
		return nil, err
	}
	return &stream{c: c, r: r, id: id, ch: ch, ctx: ctx, fixed: comp.Prompt[:min(max(comp.Fixed, 0), len(comp.Prompt))]}, nil
}

// ensure returns the running runner with the model loaded, starting one if
// needed. The caller holds the slot.
func (c *Client) ensure(ctx context.Context) (*runner, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errors.New("local model: closed")
	}
	if c.idle != nil {
		c.idle.Stop()
	}
	if c.run != nil && c.run.alive() {
		r := c.run
		c.mu.Unlock()
		return r, nil
	}
	c.run = nil
	wait := time.Duration(0)
	if c.crashes > 0 {
		wait = min(c.opts.Backoff<<(c.crashes-1), MaxBackoff) - time.Since(c.lastCrash)
	}
	c.mu.Unlock()
	if wait > 0 {
		c.log.Info("local model: waiting before restarting the runner", "in", wait.Round(time.Millisecond))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("local model: waiting to restart the runner: %w", ctx.Err())
		}
	}
	if err := c.CheckMemory(); err != nil {
		return nil, err
	}
	path := c.opts.Runner
	if path == "" {
		var err error
		if path, err = FindRunner(); err != nil {
			return nil, fmt.Errorf("local model: %w (build it with make; see README \"Local model\"): %w", err, llm.ErrUnavailable)
		}
	}
	r, err := startRunner(path, c.opts.Env, c.opts.Command, c.log)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() { close(done) })
	load := &wire.Load{Path: c.opts.Model, Threads: c.opts.Threads, Context: c.ctx}
	if c.opts.PrefixCache != "" {
		// The client decides when a saved state is replaced (prefix.go).
		load.PrefixCache = &wire.PrefixCache{Path: c.opts.PrefixCache, MaxBytes: c.opts.PrefixCacheMax}
	}
	resp, err := r.call(wire.Request{Op: wire.OpLoad, Load: load}, done)
	stop()
	if err != nil {
		r.stop(stopGrace)
		if errors.Is(err, errCancelled) {
			return nil, fmt.Errorf("local model: loading %s: %w", filepath.Base(c.opts.Model), ctx.Err())
		}
		if errors.Is(err, llm.ErrUnavailable) {
			c.crashed(r)
			return nil, err
		}
		return nil, fmt.Errorf("local model: loading %s: %w", filepath.Base(c.opts.Model), err)
	}
	if n := resp.Model.PrefixNote; n != "" {
		c.log.Warn("local model: " + n)
	}
	c.log.Info("local model loaded", "model", c.opts.Model, "pid", r.pid(), "arch", resp.Model.Arch,
		"context", resp.Model.Context, "template", c.tmpl.Family, "in", time.Since(start).Round(time.Millisecond))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		go r.stop(stopGrace)
		return nil, errors.New("local model: closed")
	}
	c.run, c.model = r, resp.Model
	c.starts++
	return r, nil
}

// CheckMemory refuses a model that cannot fit in the memory available now
// (a *MemoryError); the client runs it before each start of the runner, and
// clawedge doctor asks it before any start.
func (c *Client) CheckMemory() error {
	need := c.need
	if c.needErr != nil {
		c.log.Debug("local model: memory estimate without the KV cache", "err", c.needErr)
	}
	avail, err := MemAvailable(c.opts.MemInfo)
	if err != nil {
		c.log.Debug("local model: no memory check", "err", err)
		return nil
	}
	if need.Total() > avail {
		return &MemoryError{Model: c.opts.Model, Need: need, Available: avail}
	}
	return nil
}

// crashed records that r died, for the restart backoff.
func (c *Client) crashed(r *runner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run == r {
		c.run = nil
	}
	c.crashes++
	c.lastCrash = time.Now()
}

// release frees the slot after a generation; ok says it went well (which
// resets the crash count), and arms the idle timer.
func (c *Client) release(ok bool) {
	c.mu.Lock()
	if ok {
		c.crashes = 0
	}
	c.lastUse = time.Now()
	if d := c.opts.IdleUnload; d > 0 && c.run != nil && !c.closed {
		if c.idle != nil {
			c.idle.Stop()
		}
		c.idle = time.AfterFunc(d, c.idleUnload)
	}
	c.mu.Unlock()
	<-c.slot
}

// idleUnload stops the runner if nothing used it for IdleUnload.
func (c *Client) idleUnload() {
	select {
	case c.slot <- struct{}{}:
	default:
		return // a generation runs; its end re-arms the timer
	}
	defer func() { <-c.slot }()
	c.mu.Lock()
	r := c.run
	if r == nil || time.Since(c.lastUse) < c.opts.IdleUnload {
		c.mu.Unlock()
		return
	}
	c.run = nil
	c.mu.Unlock()
	c.log.Info("local model unloaded: idle", "after", c.opts.IdleUnload, "pid", r.pid())
	r.stop(stopGrace)
}

// prefixLog says what became of the saved prompt prefix in a generation.
func (c *Client) prefixLog(d *wire.Done) {
	if d == nil {
		return
	}
	if d.PrefixNote != "" {
		c.log.Warn("local model: " + d.PrefixNote)
	}
	if d.PrefixSaved > 0 {
		c.log.Info("local model: the prompt prefix's state is saved", "tokens", d.PrefixSaved, "file", c.opts.PrefixCache)
	}
	if d.SavedTokens > 0 {
		c.log.Info("local model: prompt prefix from the saved state", "tokens", d.SavedTokens, "of", d.PromptTokens)
	}
}

// PID is the runner's process id, 0 when none runs.
func (c *Client) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.run == nil || !c.run.alive() {
		return 0
	}
	return c.run.pid()
}

// LastReply is the usage and timing of the last generation that finished,
// nil before the first: what status shows of the model's speed.
func (c *Client) LastReply() *llm.Final {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Starts counts the runners started (and loaded) so far.
func (c *Client) Starts() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.starts
}

// Close stops the runner; a generation in progress ends with an error.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	if c.idle != nil {
		c.idle.Stop()
	}
	r := c.run
	c.run = nil
	c.mu.Unlock()
	if r != nil {
		r.stop(stopGrace)
	}
	return nil
}

// stream is one generation.
type stream struct {
	c    *Client
	r    *runner
	id   uint64
	ch   <-chan wire.Response
	ctx  context.Context
	once sync.Once
	done bool
	err  error
	// fixed is the text whose state the runner saves (Completion.Fixed).
	fixed string
}

func (s *stream) Next() (llm.Chunk, error) {
	if s.done {
		if s.err != nil {
			return llm.Chunk{}, s.err
		}
		return llm.Chunk{}, io.EOF
	}
	select {
	case resp, ok := <-s.ch:
		return s.handle(resp, ok)
	case <-s.ctx.Done():
		s.cancel()
		return llm.Chunk{}, s.fail(fmt.Errorf("local model: %w", s.ctx.Err()), true)
	}
}

func (s *stream) handle(resp wire.Response, ok bool) (llm.Chunk, error) {
	if !ok {
		s.c.crashed(s.r)
		return llm.Chunk{}, s.fail(s.r.deathErr(), false)
	}
	switch resp.Type {
	case wire.TypeToken:
		if resp.Token == nil {
			return llm.Chunk{}, nil
		}
		return llm.Chunk{Text: resp.Token.Text}, nil
	case wire.TypeDone:
		s.finish(true)
		s.done = true
		f := final(resp.Done)
		s.c.prefixLog(resp.Done)
		if resp.Done != nil && resp.Done.PrefixSaved > 0 && s.fixed != "" {
			s.c.prefix.saved(s.fixed, time.Now())
		}
		s.c.mu.Lock()
		s.c.last = f
		s.c.mu.Unlock()
		return llm.Chunk{Final: f}, nil
	case wire.TypeError:
		return llm.Chunk{}, s.fail(fmt.Errorf("local model: %s", resp.Error), true)
	}
	return llm.Chunk{}, s.fail(fmt.Errorf("local model: unexpected %q response from the runner", resp.Type), false)
}

func (s *stream) fail(err error, ok bool) error {
	s.done, s.err = true, err
	s.finish(ok)
	return err
}

func (s *stream) finish(ok bool) {
	s.once.Do(func() {
		s.r.forget(s.id)
		s.c.release(ok)
	})
}

// cancel stops the generation and waits until the runner has wound it down
// (so that the next generation does not find it busy); a runner that does
// not answer is stopped.
func (s *stream) cancel() {
	s.r.notify(wire.Request{Op: wire.OpCancel, Cancel: &wire.Cancel{Target: s.id}})
	timeout := time.After(stopGrace)
	for {
		select {
		case resp, ok := <-s.ch:
			if !ok || resp.Type == wire.TypeDone || resp.Type == wire.TypeError {
				return
			}
		case <-timeout:
			s.c.log.Warn("local model: the runner did not stop a generation; restarting it", "pid", s.r.pid())
			s.r.stop(0)
			return
		}
	}
}

// Close stops the generation if it is still running.
func (s *stream) Close() error {
	if !s.done {
		s.cancel()
		s.fail(errors.New("local model: stream closed"), true)
	}
	return nil
}

func final(d *wire.Done) *llm.Final {
	f := &llm.Final{Reason: llm.ReasonStop}
	if d == nil {
		return f
	}
	switch d.Reason {
	case "max_tokens":
		f.Reason = llm.ReasonLength
	case "context_full":
		f.Reason = llm.ReasonContext
	case "cancelled":
		f.Reason = llm.ReasonCancelled
	}
	f.Usage = llm.Usage{PromptTokens: d.PromptTokens, CachedTokens: d.ReusedTokens, SavedTokens: d.SavedTokens,
		CompletionTokens: d.Generated}
	ms := func(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }
	f.Timing = llm.Timing{FirstToken: ms(d.FirstTokenMS), Prefill: ms(d.PrefillMS), Decode: ms(d.DecodeMS)}
	return f
}

var _ llm.Provider = (*Client)(nil)
