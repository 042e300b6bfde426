// Package wire is the protocol between the core (the runner client in
// localmodel) and the runner process clawedge-llm, on the runner's stdin and
// stdout. It is pure Go so that both sides share one definition.
//
// # Framing
//
// Each message is a frame: a 4-byte big-endian length, then that many bytes of
// one JSON object. Frames are at most MaxFrame bytes. A reader that meets a
// longer or malformed frame reports an error and the connection is given up:
// the client restarts the runner.
//
// # Conversation
//
// The client sends Requests, each with a fresh ID. The runner answers each
// with Responses carrying the same ID: exactly one final response of type
// "ok", "done" or "error", preceded for "generate" by any number of "token"
// responses. Requests other than generate are answered while a generation
// runs; a second generate while one runs is an error ("busy").
//
//	→ {"id":1,"op":"load","load":{"path":"m.gguf","threads":1,"context":4096}}
//	← {"id":1,"type":"ok","model":{"arch":"qwen2","vocab":151936,...}}
//	→ {"id":2,"op":"generate","generate":{"prompt":"<|im_start|>user\n...","max_tokens":64}}
//	← {"id":2,"type":"token","token":{"id":9707,"text":"Hello","ms":31.2}}
//	← {"id":2,"type":"done","done":{"reason":"eog","prompt_tokens":20,"reused_tokens":0,...}}
//	→ {"id":3,"op":"cancel","cancel":{"target":2}}
//	← {"id":3,"type":"ok"}
//
// A generate with a constraint only produces output its automaton accepts;
// done then says how long the token masks took and whether the output was
// cut (max_tokens, stop) before the constraint was satisfied:
//
//	→ {"id":4,"op":"generate","generate":{"prompt":"...","constraint":{"form":"qwen","mode":"calls","tools":[...]}}}
//	← {"id":4,"type":"done","done":{"reason":"eog",...,"mask_ms":0.4,"mask_states":12}}
package wire

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/clawedge/clawedge/grammar"
)

// MaxFrame bounds a frame: a prompt of a full 32k context is well under it.
const MaxFrame = 16 << 20

// Ops a request can carry.
const (
	OpHealth   = "health"
	OpLoad     = "load"
	OpTokenize = "tokenize"
	OpGenerate = "generate"
	OpCancel   = "cancel"
	OpStats    = "stats"
)

// Response types.
const (
	TypeOK    = "ok"
	TypeToken = "token"
	TypeDone  = "done"
	TypeError = "error"
)

// Request is one client message; exactly the field named by Op is set.
type Request struct {
	ID       uint64    `json:"id"`
	Op       string    `json:"op"`
	Load     *Load     `json:"load,omitempty"`
	Tokenize *Tokenize `json:"tokenize,omitempty"`
	Generate *Generate `json:"generate,omitempty"`
	Cancel   *Cancel   `json:"cancel,omitempty"`
}

type Load struct {
	Path    string `json:"path"`
	Threads int    `json:"threads,omitempty"`
	Context int    `json:"context,omitempty"`
	Batch   int    `json:"batch,omitempty"`
	// PrefixCache, when set, is where the KV state of a prompt's fixed
	// prefix (Generate.Prefix) is saved and found again after a restart.
	PrefixCache *PrefixCache `json:"prefix_cache,omitempty"`
}

// PrefixCache says where and how the runner keeps the KV state of the fixed
// prompt prefix (system prompt and tools) on disk: the core decides (its
// data_dir), the runner writes one file there atomically.
type PrefixCache struct {
	Path     string `json:"path"`
	MaxBytes int64  `json:"max_bytes"` // a state larger than this is not saved
	// ReplaceAfter is how many seconds a saved prefix is kept before a
	// different one may replace it (flash wears; 0: at once). A missing or
	// unusable file is always written.
	ReplaceAfter float64 `json:"replace_after,omitempty"`
}

type Tokenize struct {
	Text    string `json:"text"`
	Special bool   `json:"special,omitempty"` // parse <|im_start|> and friends as special tokens
}

// Generate continues Prompt (tokenized with special tokens) or Tokens.
type Generate struct {
	Prompt    string   `json:"prompt,omitempty"`
	Tokens    []int32  `json:"tokens,omitempty"`
	MaxTokens int      `json:"max_tokens,omitempty"` // 0 = until end of generation or the context is full
	Stop      []string `json:"stop,omitempty"`       // end when the output ends with one of these (not included)
	Sampling  Sampling `json:"sampling"`
	// Constraint, when set, limits the output to what the spec's automaton
	// accepts: each step samples only tokens that keep it alive, and end of
	// generation only where the output may end. The runner compiles it and
	// keeps the last few compiled, keyed by the spec's JSON.
	Constraint *grammar.Spec `json:"constraint,omitempty"`
	// ThinkBudget, with a constraint that lets a thinking model reason
	// (Spec.Think), closes its <think> section after this many tokens: the
	// runner writes "\n</think>\n\n" itself and the answer follows, still
	// constrained. 0: no limit.
	ThinkBudget int `json:"think_budget,omitempty"`
	// Prefix is how many bytes at the start of Prompt are the fixed part of
	// the conversation (the system turn with the tools): with a prefix
	// cache, its KV state is saved once computed. 0: none.
	Prefix int `json:"prefix,omitempty"`
}

// Sampling mirrors localmodel/sampling.Params on the wire.
type Sampling struct {
	Temperature   float32 `json:"temperature,omitempty"`
	TopK          int     `json:"top_k,omitempty"`
	TopP          float32 `json:"top_p,omitempty"`
	MinP          float32 `json:"min_p,omitempty"`
	RepeatPenalty float32 `json:"repeat_penalty,omitempty"`
	RepeatLastN   int     `json:"repeat_last_n,omitempty"`
	Seed          uint64  `json:"seed,omitempty"`
}

type Cancel struct {
	Target uint64 `json:"target"` // the ID of the generate request to stop
}

// Response is one runner message.
type Response struct {
	ID     uint64  `json:"id"`
	Type   string  `json:"type"`
	Error  string  `json:"error,omitempty"`
	Model  *Model  `json:"model,omitempty"`
	Tokens []int32 `json:"tokens,omitempty"`
	Token  *Token  `json:"token,omitempty"`
	Done   *Done   `json:"done,omitempty"`
	Stats  *Stats  `json:"stats,omitempty"`
	Health *Health `json:"health,omitempty"`
}

type Model struct {
	Path     string `json:"path"`
	Arch     string `json:"arch"`
	Params   uint64 `json:"params"`
	Bytes    uint64 `json:"bytes"`
	Vocab    int    `json:"vocab"`
	Context  int    `json:"context"`
	Template string `json:"template,omitempty"`
	// PrefixNote says why a saved prefix state found at load is not used
	// (another model or runner, damaged); "" when there is none or it is.
	PrefixNote string `json:"prefix_note,omitempty"`
}

// Token is one generated token. Text is the UTF-8 text it completes: bytes of
// a character split across tokens arrive with the token that completes it.
type Token struct {
	ID   int32   `json:"id"`
	Text string  `json:"text"`
	MS   float64 `json:"ms"` // time to produce this token
}

// Done ends a generation.
type Done struct {
	Reason          string  `json:"reason"` // eog, max_tokens, stop, context_full, cancelled
	PromptTokens    int     `json:"prompt_tokens"`
	ReusedTokens    int     `json:"reused_tokens"`    // prompt prefix found in the KV cache
	EvaluatedTokens int     `json:"evaluated_tokens"` // prompt tokens actually evaluated
	Generated       int     `json:"generated"`
	PrefillMS       float64 `json:"prefill_ms"`
	DecodeMS        float64 `json:"decode_ms"`
	FirstTokenMS    float64 `json:"first_token_ms"` // request to first token
	// Incomplete: a constrained generation ended (max_tokens, stop, a full
	// context, cancel) where the constraint does not accept the output.
	Incomplete bool `json:"incomplete,omitempty"`
	// MaskMS is the time spent on the constraint's token masks, and
	// MaskStates the number of automaton states whose set was computed for
	// this generation (0 when all were cached).
	MaskMS     float64 `json:"mask_ms,omitempty"`
	MaskStates int     `json:"mask_states,omitempty"`
	// SavedTokens of ReusedTokens came from the saved prefix state on disk;
	// PrefixSaved is the length of a prefix whose state this generation
	// saved; PrefixNote why a saved state could not be loaded or saved.
	SavedTokens int    `json:"saved_tokens,omitempty"`
	PrefixSaved int    `json:"prefix_saved,omitempty"`
	PrefixNote  string `json:"prefix_note,omitempty"`
}

type Stats struct {
	Generations  uint64 `json:"generations"`
	TokensOut    uint64 `json:"tokens_out"`
	TokensIn     uint64 `json:"tokens_in"`
	TokensReused uint64 `json:"tokens_reused"`
	KVTokens     int    `json:"kv_tokens"`
}

type Health struct {
	Loaded bool   `json:"loaded"`
	Model  string `json:"model,omitempty"`
	Busy   bool   `json:"busy"`
}

// Writer writes frames; it is safe for concurrent use (tokens and answers to
// other requests interleave on one stream).
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sends v as one frame.
func (w *Writer) Write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(body) > MaxFrame {
		return fmt.Errorf("wire: frame of %d bytes exceeds %d", len(body), MaxFrame)
	}
	frame := make([]byte, 4+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	copy(frame[4:], body)
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err = w.w.Write(frame)
	return err
}

// ErrFrame marks a malformed stream: the peer is not speaking this protocol.
var ErrFrame = errors.New("wire: malformed frame")

// Read reads one frame into v. io.EOF means the stream ended between frames.
func Read(r io.Reader, v any) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: stream ended inside a frame header", ErrFrame)
		}
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return fmt.Errorf("%w: length %d exceeds %d", ErrFrame, n, MaxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return fmt.Errorf("%w: stream ended inside a %d-byte frame", ErrFrame, n)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %v", ErrFrame, err)
	}
	return nil
}
