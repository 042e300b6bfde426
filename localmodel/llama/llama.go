//go:build llamacpp

// Package llama is clawedge's own thin binding over llama.h: load a model, make
// a context, tokenize and detokenize, decode batches, read logits, and manage
// the KV cache. It is cgo and is built only into the runner process,
// clawedge-llm (build tag llamacpp); the static core never links it.
//
// The libraries come from scripts/fetch-llama.sh. At run time they are found
// through the rpath: $ORIGIN/../lib in the installed layout, and the dev folder
// third_party/llama/<arch>/lib for builds and tests in this repository.
package llama

/*
#cgo CFLAGS: -I${SRCDIR}/../../third_party/llama/include
#cgo linux,amd64 LDFLAGS: -L${SRCDIR}/../../third_party/llama/linux-x64/lib -Wl,-rpath,${SRCDIR}/../../third_party/llama/linux-x64/lib
#cgo linux,arm64 LDFLAGS: -L${SRCDIR}/../../third_party/llama/linux-arm64/lib -Wl,-rpath,${SRCDIR}/../../third_party/llama/linux-arm64/lib
#cgo LDFLAGS: -Wl,-rpath,$ORIGIN/../lib -lllama -lggml -lggml-base
#include <stdlib.h>
#include "llama.h"
#include "ggml-backend.h"

// quiet drops llama.cpp's log lines: the runner reports what matters itself.
static void quiet(enum ggml_log_level level, const char * text, void * user_data) {}
static void set_quiet_log(void) { llama_log_set(quiet, NULL); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"
)

// Token is a vocabulary index.
type Token = int32

var initOnce sync.Once

// Init loads the CPU backend variants from libDir (the folder holding
// libggml-cpu-*.so; ggml picks the best one for this CPU) and initialises
// llama.cpp. It is safe to call more than once; only the first call acts.
func Init(libDir string, verbose bool) {
	initOnce.Do(func() {
		if !verbose {
			C.set_quiet_log()
		}
		dir := C.CString(libDir)
		defer C.free(unsafe.Pointer(dir))
		C.ggml_backend_load_all_from_path(dir)
		C.llama_backend_init()
	})
}

// Model is a loaded GGUF model (or only its vocabulary).
type Model struct {
	m     *C.struct_llama_model
	vocab *C.struct_llama_vocab
}

// LoadOptions says how to load a model.
type LoadOptions struct {
	VocabOnly bool // load the tokenizer only, no weights (fast; for tokenizing)
}

// LoadModel loads a GGUF file. Errors name the path.
func LoadModel(path string, opts LoadOptions) (*Model, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("model %s: %w", path, err)
	}
	params := C.llama_model_default_params()
	params.vocab_only = C.bool(opts.VocabOnly)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	m := C.llama_model_load_from_file(cpath, params)
	if m == nil {
		return nil, fmt.Errorf("model %s: llama.cpp could not load it (not a GGUF model of a supported architecture, or damaged)", path)
	}
	return &Model{m: m, vocab: C.llama_model_get_vocab(m)}, nil
}

// Close frees the model. The Model must not be used afterwards.
func (m *Model) Close() {
	if m.m != nil {
		C.llama_model_free(m.m)
		m.m, m.vocab = nil, nil
	}
}

// VocabSize is the number of tokens in the vocabulary.
func (m *Model) VocabSize() int { return int(C.llama_vocab_n_tokens(m.vocab)) }

// Tokenize turns text into tokens. special parses special tokens such as
// <|im_start|> as themselves instead of as plain text.
func (m *Model) Tokenize(text string, addSpecial, special bool) ([]Token, error) {
	if len(text) > 1<<30 {
		return nil, errors.New("tokenize: text too long")
	}
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	n := len(text) + 8 // a token covers at least one byte, plus BOS/EOS
	for range 2 {
		buf := make([]Token, n)
		var first *C.llama_token
		if n > 0 {
			first = (*C.llama_token)(unsafe.Pointer(&buf[0]))
		}
		got := C.llama_tokenize(m.vocab, ctext, C.int32_t(len(text)), first, C.int32_t(n), C.bool(addSpecial), C.bool(special))
		if got >= 0 {
			return buf[:got], nil
		}
		n = int(-got)
	}
	return nil, errors.New("tokenize: buffer size disagreement")
}

// Piece returns the bytes of one token. special renders special tokens
// (<|im_end|>) instead of nothing. The bytes may be part of a UTF-8 sequence.
func (m *Model) Piece(t Token, special bool) []byte {
	buf := make([]byte, 64)
	for {
		n := C.llama_token_to_piece(m.vocab, C.llama_token(t), (*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(len(buf)), 0, C.bool(special))
		if n >= 0 {
			return buf[:n]
		}
		buf = make([]byte, -n)
	}
}

// Detokenize turns tokens back into text.
func (m *Model) Detokenize(tokens []Token, special bool) (string, error) {
	if len(tokens) == 0 {
		return "", nil
	}
	n := len(tokens)*8 + 16
	for range 2 {
		buf := make([]byte, n)
		got := C.llama_detokenize(m.vocab, (*C.llama_token)(unsafe.Pointer(&tokens[0])), C.int32_t(len(tokens)),
			(*C.char)(unsafe.Pointer(&buf[0])), C.int32_t(n), false, C.bool(special))
		if got >= 0 {
			return string(buf[:got]), nil
		}
		n = int(-got)
	}
	return "", errors.New("detokenize: buffer size disagreement")
}
