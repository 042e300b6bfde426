//go:build llamacpp

// Package llama is clawedge's own thin binding over llama.h: load a model, make
// a context, tokenize and detokenize, decode batches, read logits, and manage
// the KV cache. It is cgo and is built only into the runner process,
// clawedge-llm (build tag llamacpp); the static core never links it.
//
// The libraries come from scripts/fetch-llama.sh. At run time they are found
// through the rpath: $ORIGIN/../lib in the release tarball's layout,
// $ORIGIN/../lib/clawedge in the .deb's (/usr/bin, /usr/lib/clawedge), then the dev folder
// third_party/llama/<arch>/lib for builds and tests in this repository (see
// rpath_dev.go; release builds, tag llamarelease, leave it out).
package llama

/*
#cgo CFLAGS: -I${SRCDIR}/../../third_party/llama/include
#cgo linux,amd64 LDFLAGS: -L${SRCDIR}/../../third_party/llama/linux-x64/lib
#cgo linux,arm64 LDFLAGS: -L${SRCDIR}/../../third_party/llama/linux-arm64/lib
#cgo LDFLAGS: -Wl,-rpath,$ORIGIN/../lib:$ORIGIN/../lib/clawedge -lllama -lggml -lggml-base -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "llama.h"
#include "ggml-backend.h"

// llama.cpp and ggml log through one callback. It keeps the first error-level
// line since the last take_first_error (for LoadModel's error: llama.cpp only
// returns NULL, and its later error lines say just "failed to load") and, when
// verbose, prints everything to stderr; otherwise the runner reports what
// matters itself.
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;
static char first_error[512];
static int in_first_error;
static int log_verbose;

static void log_cb(enum ggml_log_level level, const char * text, void * user_data) {
	if (log_verbose) fputs(text, stderr);
	pthread_mutex_lock(&log_mu);
	if (level == GGML_LOG_LEVEL_ERROR && first_error[0] == 0) {
		snprintf(first_error, sizeof first_error, "%s", text);
		in_first_error = 1;
	} else if (level == GGML_LOG_LEVEL_CONT && in_first_error) {
		size_t n = strlen(first_error);
		snprintf(first_error + n, sizeof first_error - n, "%s", text);
	} else {
		in_first_error = 0;
	}
	pthread_mutex_unlock(&log_mu);
}
static void set_log(int verbose) {
	log_verbose = verbose;
	llama_log_set(log_cb, NULL);
	ggml_log_set(log_cb, NULL);
}
static void take_first_error(char * buf, size_t n) {
	pthread_mutex_lock(&log_mu);
	snprintf(buf, n, "%s", first_error);
	first_error[0] = 0;
	in_first_error = 0;
	pthread_mutex_unlock(&log_mu);
}

// read_tokens renders every token into one malloc'd buffer: token i's bytes
// are [off[i], off[i+1]). It returns NULL if memory runs out.
static char * read_tokens(const struct llama_vocab * v, int n, bool special, uint32_t * off,
		uint32_t * attr, unsigned char * eog, size_t * size) {
	size_t cap = (size_t)n * 8 + 256, used = 0;
	char * buf = malloc(cap);
	if (buf == NULL) return NULL;
	for (int i = 0; i < n; i++) {
		off[i] = (uint32_t)used;
		attr[i] = (uint32_t)llama_vocab_get_attr(v, i);
		eog[i] = llama_vocab_is_eog(v, i);
		for (;;) {
			int32_t room = cap - used > INT32_MAX ? INT32_MAX : (int32_t)(cap - used);
			int32_t got = llama_token_to_piece(v, i, buf + used, room, 0, special);
			if (got >= 0) { used += (size_t)got; break; }
			cap = cap * 2 + (size_t)(-got);
			char * grown = realloc(buf, cap);
			if (grown == NULL) { free(buf); return NULL; }
			buf = grown;
		}
	}
	off[n] = (uint32_t)used;
	*size = used;
	return buf;
}

// libllama_path is the file libllama was loaded from: the ggml CPU variants
// lie beside it, in the installed layout and in the dev folder alike.
static const char * libllama_path(void) {
	Dl_info info;
	if (dladdr((void *)llama_backend_init, &info) == 0) return NULL;
	return info.dli_fname;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// Token is a vocabulary index.
type Token = int32

var initOnce sync.Once

// Init loads the CPU backend variants from libDir (the folder holding
// libggml-cpu-*.so; ggml picks the best one for this CPU) and initialises
// llama.cpp. An empty libDir means LibDir(). verbose copies llama.cpp's log
// to stderr. It is safe to call more than once; only the first call acts.
func Init(libDir string, verbose bool) {
	initOnce.Do(func() {
		v := 0
		if verbose {
			v = 1
		}
		C.set_log(C.int(v))
		if libDir == "" {
			libDir = LibDir()
		}
		dir := C.CString(libDir)
		defer C.free(unsafe.Pointer(dir))
		C.ggml_backend_load_all_from_path(dir)
		C.llama_backend_init()
	})
}

// Backends names the ggml devices Init loaded ("CPU: AMD EPYC ..."): none
// means no libggml-cpu-*.so was found beside the libraries, and no model can
// run.
func Backends() []string {
	var out []string
	for i := C.size_t(0); i < C.ggml_backend_dev_count(); i++ {
		d := C.ggml_backend_dev_get(i)
		out = append(out, C.GoString(C.ggml_backend_dev_name(d))+": "+C.GoString(C.ggml_backend_dev_description(d)))
	}
	return out
}

// LibDir is the folder libllama was loaded from (through the rpath:
// $ORIGIN/../lib installed, third_party/llama/<arch>/lib in the dev tree), or
// "." if that cannot be told.
func LibDir() string {
	p := LibPath()
	if p == "" {
		return "."
	}
	return filepath.Dir(p)
}

// LibPath is the file libllama was loaded from, "" if that cannot be told:
// what the runner names as its llama.cpp when it keys saved KV states.
func LibPath() string {
	p := C.libllama_path()
	if p == nil {
		return ""
	}
	return C.GoString(p)
}

// firstError returns (and forgets) llama.cpp's first error-level log line
// since the last call, without the names of the functions that logged it:
// "unknown model architecture: 'qwen9'", "tensor 'token_embd.weight' not found".
func firstError() string {
	var buf [512]C.char
	C.take_first_error(&buf[0], C.size_t(len(buf)))
	msg := strings.TrimSpace(C.GoString(&buf[0]))
	for {
		msg = strings.TrimPrefix(msg, "error loading model: ")
		name, rest, ok := strings.Cut(msg, ": ")
		if !ok || name == "" || strings.ContainsFunc(name, func(r rune) bool {
			return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
		}) {
			return msg
		}
		msg = rest
	}
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
	firstError()
	m := C.llama_model_load_from_file(cpath, params)
	if m == nil {
		msg := "not a GGUF model of a supported architecture, or damaged"
		if e := firstError(); e != "" {
			msg = e
		}
		return nil, fmt.Errorf("model %s: llama.cpp cannot load it: %s", path, msg)
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

// TokenAttr is a token's attributes in the vocabulary (llama_token_attr flags).
type TokenAttr uint32

const (
	AttrUnknown     TokenAttr = C.LLAMA_TOKEN_ATTR_UNKNOWN
	AttrUnused      TokenAttr = C.LLAMA_TOKEN_ATTR_UNUSED
	AttrNormal      TokenAttr = C.LLAMA_TOKEN_ATTR_NORMAL
	AttrControl     TokenAttr = C.LLAMA_TOKEN_ATTR_CONTROL
	AttrUserDefined TokenAttr = C.LLAMA_TOKEN_ATTR_USER_DEFINED
	AttrByte        TokenAttr = C.LLAMA_TOKEN_ATTR_BYTE
)

// Attr returns the attributes of token t: normal (byte-level BPE text),
// control (<|im_start|>), user-defined (added text such as <tool_call>), ...
func (m *Model) Attr(t Token) TokenAttr {
	return TokenAttr(C.llama_vocab_get_attr(m.vocab, C.llama_token(t)))
}

// TokenTable is the whole vocabulary read in one pass: token t's bytes are
// Data[Off[t]:Off[t+1]], Attr[t] its attributes, EOG[t] whether it ends
// generation.
type TokenTable struct {
	Data []byte
	Off  []uint32
	Attr []TokenAttr
	EOG  []bool
}

// Tokens reads every token's bytes (special renders special tokens as their
// text), attributes and end-of-generation flag, in one call into llama.cpp
// rather than three per token.
func (m *Model) Tokens(special bool) (*TokenTable, error) {
	n := m.VocabSize()
	if n <= 0 {
		return nil, errors.New("llama: empty vocabulary")
	}
	off := make([]uint32, n+1)
	attr := make([]TokenAttr, n)
	eog := make([]C.uchar, n)
	var size C.size_t
	data := C.read_tokens(m.vocab, C.int(n), C.bool(special), (*C.uint32_t)(unsafe.Pointer(&off[0])),
		(*C.uint32_t)(unsafe.Pointer(&attr[0])), &eog[0], &size)
	if data == nil {
		return nil, errors.New("llama: out of memory reading the vocabulary")
	}
	defer C.free(unsafe.Pointer(data))
	t := &TokenTable{Data: C.GoBytes(unsafe.Pointer(data), C.int(size)), Off: off, Attr: attr, EOG: make([]bool, n)}
	for i, e := range eog {
		t.EOG[i] = e != 0
	}
	return t, nil
}
