//go:build llamacpp

package llama

/*
#include <stdlib.h>
#include "llama.h"

// abort_flag is polled by llama.cpp between compute steps; Go sets it to cancel
// a long prompt evaluation from another goroutine.
static bool abort_flag(void * data) { return __atomic_load_n((int *)data, __ATOMIC_RELAXED) != 0; }
static void set_abort(struct llama_context_params * p, int * flag) {
	p->abort_callback = abort_flag;
	p->abort_callback_data = flag;
}
static void batch_set(struct llama_batch * b, int i, llama_token t, llama_pos pos, bool out) {
	b->token[i] = t;
	b->pos[i] = pos;
	b->n_seq_id[i] = 1;
	b->seq_id[i][0] = 0;
	b->logits[i] = out;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// ContextOptions size a context.
type ContextOptions struct {
	Threads int // compute threads (ggml threads spin while waiting: 1 on a busy 2-core machine)
	Context int // context window in tokens; 0 = the model's own
	Batch   int // tokens per decode call during prompt evaluation; 0 = 512
}

// Context is one model context: a KV cache for a single sequence and the
// logits of the last evaluated token. It is not safe for concurrent use,
// except Cancel.
type Context struct {
	m      *Model
	c      *C.struct_llama_context
	batch  C.struct_llama_batch
	nBatch int
	nVocab int
	abort  *C.int // C memory: llama.cpp reads it while Go code may write it
}

// ErrCancelled is returned by Decode when Cancel interrupted it.
var ErrCancelled = errors.New("llama: decode cancelled")

// NewContext creates a context for the model.
func (m *Model) NewContext(opts ContextOptions) (*Context, error) {
	if opts.Threads <= 0 {
		opts.Threads = 1
	}
	if opts.Batch <= 0 {
		opts.Batch = 512
	}
	params := C.llama_context_default_params()
	params.n_ctx = C.uint32_t(opts.Context)
	params.n_batch = C.uint32_t(opts.Batch)
	params.n_ubatch = C.uint32_t(opts.Batch)
	params.n_threads = C.int32_t(opts.Threads)
	params.n_threads_batch = C.int32_t(opts.Threads)
	params.no_perf = false
	abort := (*C.int)(C.calloc(1, C.size_t(unsafe.Sizeof(C.int(0)))))
	C.set_abort(&params, abort)
	c := C.llama_init_from_model(m.m, params)
	if c == nil {
		C.free(unsafe.Pointer(abort))
		return nil, fmt.Errorf("llama: cannot create a context of %d tokens (out of memory?)", opts.Context)
	}
	ctx := &Context{m: m, c: c, nBatch: opts.Batch, nVocab: m.VocabSize(), abort: abort}
	ctx.batch = C.llama_batch_init(C.int32_t(opts.Batch), 0, 1)
	return ctx, nil
}

// Close frees the context.
func (c *Context) Close() {
	if c.c == nil {
		return
	}
	C.llama_batch_free(c.batch)
	C.llama_free(c.c)
	C.free(unsafe.Pointer(c.abort))
	c.c = nil
}

// Size is the context window in tokens.
func (c *Context) Size() int { return int(C.llama_n_ctx(c.c)) }

// Decode evaluates tokens at positions start, start+1, ... of the single
// sequence, in batches, and keeps the logits of the last one. The KV cache must
// already hold positions 0..start-1 (see TrimKV). After ErrCancelled the KV
// cache may hold some of the tokens: trim it back to what is known.
func (c *Context) Decode(tokens []Token, start int) error {
	if len(tokens) == 0 {
		return errors.New("llama: decode of no tokens")
	}
	if start+len(tokens) > c.Size() {
		return fmt.Errorf("llama: %d tokens do not fit a context of %d", start+len(tokens), c.Size())
	}
	for i := 0; i < len(tokens); i += c.nBatch {
		if atomic.LoadInt32((*int32)(unsafe.Pointer(c.abort))) != 0 {
			return ErrCancelled
		}
		chunk := tokens[i:min(i+c.nBatch, len(tokens))]
		last := i+len(chunk) == len(tokens)
		for j, t := range chunk {
			C.batch_set(&c.batch, C.int(j), C.llama_token(t), C.llama_pos(start+i+j), C.bool(last && j == len(chunk)-1))
		}
		c.batch.n_tokens = C.int32_t(len(chunk))
		switch rc := C.llama_decode(c.c, c.batch); {
		case rc == 0:
		case rc == 2:
			return ErrCancelled
		case rc == 1:
			return fmt.Errorf("llama: no room in the KV cache for %d tokens at position %d", len(chunk), start+i)
		default:
			return fmt.Errorf("llama: decode failed (code %d) at position %d", int(rc), start+i)
		}
	}
	return nil
}

// Cancel interrupts a Decode running in another goroutine: it returns
// ErrCancelled, and so does every later Decode until ResetCancel. (A flag that
// Decode cleared itself could lose a Cancel sent just before the call.)
func (c *Context) Cancel() { atomic.StoreInt32((*int32)(unsafe.Pointer(c.abort)), 1) }

// ResetCancel clears a Cancel, for the next piece of work.
func (c *Context) ResetCancel() { atomic.StoreInt32((*int32)(unsafe.Pointer(c.abort)), 0) }

// Logits returns the logits of the last decoded token, one per vocabulary entry.
// The slice aliases llama.cpp's buffer: it is valid until the next Decode.
func (c *Context) Logits() []float32 {
	p := C.llama_get_logits_ith(c.c, -1)
	if p == nil {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(p)), c.nVocab)
}

// KVEnd is one past the last position held in the KV cache (0 when empty).
func (c *Context) KVEnd() int {
	return int(C.llama_memory_seq_pos_max(C.llama_get_memory(c.c), 0)) + 1
}

// TrimKV drops the cached positions from `from` on, keeping the prefix
// 0..from-1, so that a new prompt sharing that prefix only evaluates the rest.
func (c *Context) TrimKV(from int) error {
	if !C.llama_memory_seq_rm(C.llama_get_memory(c.c), 0, C.llama_pos(from), -1) {
		return fmt.Errorf("llama: cannot trim the KV cache at %d", from)
	}
	return nil
}

// ClearKV empties the KV cache.
func (c *Context) ClearKV() { C.llama_memory_clear(C.llama_get_memory(c.c), C.bool(true)) }

// IsEndOfGeneration reports whether t ends generation (EOS, <|im_end|>, ...).
func (m *Model) IsEndOfGeneration(t Token) bool {
	return bool(C.llama_vocab_is_eog(m.vocab, C.llama_token(t)))
}

// Params is the number of weights; Size the bytes they take.
func (m *Model) Params() uint64 { return uint64(C.llama_model_n_params(m.m)) }
func (m *Model) Size() uint64   { return uint64(C.llama_model_size(m.m)) }

// Meta returns a GGUF metadata value as a string.
func (m *Model) Meta(key string) (string, bool) {
	ckey := C.CString(key)
	defer C.free(unsafe.Pointer(ckey))
	buf := make([]byte, 256)
	for {
		n := C.llama_model_meta_val_str(m.m, ckey, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
		if n < 0 {
			return "", false
		}
		if int(n) < len(buf) {
			return string(buf[:n]), true
		}
		buf = make([]byte, int(n)+1)
	}
}
