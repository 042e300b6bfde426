// Package llm is what the agent sees of a language model, wherever it runs:
// the conversation types (messages, tool definitions, tool calls), the
// Provider interface that the local runner client and the remote providers
// implement, and the errors a router acts on.
//
// It imports nothing of ours but grammar: tool definitions arrive here already
// built from grammar.ToolSpec (by the agent), so that providers never depend on
// the tool registry.
package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/grammar"
)

// Role says who speaks in a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool" // the result of a tool call, fed back to the model
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message made, in order.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and Name say, in a tool message, which call this is the
	// result of. Remote APIs need the ID; Qwen's template needs neither
	// (results follow their calls in order).
	ToolCallID string `json:"tool_call_id,omitempty"`
	Name       string `json:"name,omitempty"`
}

// ToolCall is one call a model asked for.
type ToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is a JSON object.
	Arguments json.RawMessage `json:"arguments"`
}

// ToolDef is a tool as a model is told about it.
type ToolDef struct {
	Name string `json:"name"`
	Doc  string `json:"description,omitempty"`
	// Params is a JSON Schema object: {"type": "object", "properties":
	// {...}, "required": [...]}. Key order is kept when it is shown to a
	// model, so the agent controls what the model reads first.
	Params json.RawMessage `json:"parameters,omitempty"`
}

// Sampling settings; the zero value is greedy decoding.
type Sampling struct {
	Temperature   float32
	TopK          int
	TopP          float32
	MinP          float32
	RepeatPenalty float32
	Seed          uint64
}

// Request is one model call.
type Request struct {
	Messages []Message
	Tools    []ToolDef
	// MaxTokens bounds the reply; 0 is the provider's default.
	MaxTokens int
	// Sampling nil means the provider's (or model's) recommended settings.
	Sampling *Sampling
	// Stop ends the reply when it ends with one of these (not included).
	Stop []string
	// NoThink asks a thinking model (Qwen3) to answer at once: its
	// template's enable_thinking=false. Others ignore it.
	NoThink bool
	// Constraint, when set, limits the reply to the allowed calls: the local
	// runner compiles it to token masks; remote providers send it as GBNF or
	// JSON Schema where the server accepts one and ignore it otherwise (the
	// agent validates every call again either way).
	Constraint *grammar.Spec
	// Escalations say that answers this request's caller had were not good enough
	// (a local reply still invalid after a repair attempt, the same tool error
	// again, an answer judged insufficient): a router passes over each From and
	// every provider its strategy orders before it. Other providers ignore them.
	Escalations []Escalation `json:",omitempty"`
	// ToolChoice says whether the reply must call one of Tools: remote
	// providers send it as the API's tool_choice; the local runner is held
	// to it by Constraint's mode, which the agent sets to match.
	ToolChoice ToolChoice `json:",omitempty"`
}

// Escalation is one "that answer was not good enough" for a router. They
// compose: the furthest one applies. When no provider that could take the call
// comes after From, the router ignores it (and its route says so) rather than
// failing: a board with only a local model keeps answering.
type Escalation struct {
	From   string // the provider that gave the answer (its Final.Provider)
	Reason string // why, shown in the route
}

// ToolChoice is OpenAI's tool_choice, as far as every provider can honour it.
type ToolChoice string

const (
	ToolChoiceAuto     ToolChoice = ""         // the model decides
	ToolChoiceRequired ToolChoice = "required" // the reply must call a tool
	ToolChoiceNone     ToolChoice = "none"     // the reply must not call one
)

// Provider is a model: local (the runner) or remote.
type Provider interface {
	Name() string
	Caps() Caps
	// Chat starts a reply. The stream must be read to the end or closed.
	Chat(ctx context.Context, req Request) (Stream, error)
}

// Caps is what a provider can do.
type Caps struct {
	Context int  // context window, tokens
	Local   bool // runs on this board: no network, no cost
	Tools   bool // takes tool definitions and returns tool calls
	Grammar bool // can constrain decoding to the allowed calls
}

// Stream is a reply as it is produced. Next returns chunks in order; the
// last one has Final set, and after it Next returns io.EOF. Close stops the
// generation early and frees the provider for the next call; it is safe to
// call at any time, more than once.
type Stream interface {
	Next() (Chunk, error)
	Close() error
}

// Chunk is a piece of the reply.
type Chunk struct {
	Text  string
	Final *Final // set on the last chunk only
}

// Final ends a reply: why, what it cost, how long it took.
type Final struct {
	Reason Reason
	Usage  Usage
	Timing Timing
	// ToolCalls are the reply's calls, parsed by the provider: from the API's
	// tool-call fields, or from text the model wrote them in (TextCalls).
	ToolCalls []ToolCall
	// Raw, set when the calls were read from the text, is the whole text as
	// the model wrote it (the chunks carried only the part before the calls).
	Raw string
	// CallsErr says why calls written in the text could not be read.
	CallsErr *CallsError
	// Sent, from a remote provider, is the request as it went on the wire
	// (the body, with the constraint in the server's form: grammar or
	// schema): what the audit's digest is of.
	Sent *Sent
	// Provider and Model say who answered; Route says why that provider was
	// chosen (set by the router, "" when a provider is called directly);
	// Cost is in the configured currency units, 0 for local models.
	Provider string
	Model    string
	Route    string
	Cost     float64
}

// Speed is the reply's usage and timing for people: "prompt 412 tokens (0
// cached) in 9.8s, 16 generated in 5.1s (3.1 tokens/s), first token after
// 9.9s"; a local model's first reply after a restart adds how many of the
// cached tokens came from the prefix state saved on disk.
func (f *Final) Speed() string {
	u, t := f.Usage, f.Timing
	cached := fmt.Sprintf("%d cached", u.CachedTokens)
	if u.SavedTokens > 0 {
		cached += fmt.Sprintf(", %d from the saved prefix", u.SavedTokens)
	}
	return fmt.Sprintf("prompt %d tokens (%s) in %v, %d generated in %v (%.1f tokens/s), first token after %v",
		u.PromptTokens, cached, t.Prefill.Round(time.Millisecond), u.CompletionTokens, t.Decode.Round(time.Millisecond),
		float64(u.CompletionTokens)/max(t.Decode.Seconds(), 1e-9), t.FirstToken.Round(time.Millisecond))
}

// Sent is a request body's SHA-256 (hex) and size.
type Sent struct {
	SHA256 string
	Bytes  int
}

// SentOf is body's Sent.
func SentOf(body []byte) *Sent {
	sum := sha256.Sum256(body)
	return &Sent{SHA256: hex.EncodeToString(sum[:]), Bytes: len(body)}
}

// Reason is why a reply ended.
type Reason string

const (
	ReasonStop      Reason = "stop"      // the model ended it, or a stop string
	ReasonLength    Reason = "length"    // MaxTokens
	ReasonContext   Reason = "context"   // the context window is full
	ReasonCancelled Reason = "cancelled" // the caller stopped it
)

// Usage counts tokens.
type Usage struct {
	PromptTokens     int
	CachedTokens     int // of the prompt, reused from the previous call
	SavedTokens      int // of CachedTokens, loaded from a state saved on disk (a local model after a restart)
	CompletionTokens int
}

// Timing of a reply.
type Timing struct {
	FirstToken time.Duration // from the request to the first token
	Prefill    time.Duration
	Decode     time.Duration
}

// Errors providers wrap, so that a router can tell with errors.Is why a
// provider failed and go elsewhere.
var (
	// ErrCapacity: the request does not fit this provider (a model too
	// large for the memory, a prompt longer than the context).
	ErrCapacity = errors.New("capacity exceeded")
	// ErrUnavailable: the provider failed while serving (the local runner
	// crashed, a remote endpoint is down); the next call may work.
	ErrUnavailable = errors.New("model unavailable")
)

// Collect reads a stream to the end and returns the whole text and the
// final chunk's information. It closes the stream.
func Collect(s Stream) (string, *Final, error) {
	defer s.Close()
	var text []byte
	for {
		c, err := s.Next()
		if err != nil {
			return string(text), nil, err
		}
		text = append(text, c.Text...)
		if c.Final != nil {
			return string(text), c.Final, nil
		}
	}
}
