//go:build llamacpp

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/clawedge/clawedge/internal/atomicfile"
	"github.com/clawedge/clawedge/localmodel/llama"
	"github.com/clawedge/clawedge/localmodel/wire"
)

// The KV state of the fixed prompt prefix (system prompt and tools) is kept
// in one file, so that the first reply after a restart or a boot prefills
// only what follows it. The file is
//
//	"CLAWKV01" | uint32 header length | header JSON | tokens (int32 LE) | state
//
// where state is llama.cpp's sequence state (llama_state_seq_get_data).
// The header names the model file and the runner that wrote it: a state is
// only valid for the same weights and the same llama.cpp, and llama.cpp does
// not check the values, only the shape, so the state carries a CRC.
const prefixMagic = "CLAWKV01"

// maxPrefixHeader bounds the header a reader accepts: it is a few hundred bytes.
const maxPrefixHeader = 64 << 10

// prefixKey is what a saved state is valid for.
type prefixKey struct {
	Model  string `json:"model"`  // the GGUF's path, size and modification time
	Runner string `json:"runner"` // this executable's and libllama's sizes and modification times
}

type prefixHeader struct {
	Key    prefixKey `json:"key"`
	Tokens int       `json:"tokens"`
	Digest string    `json:"digest"` // SHA-256 of the tokens as little-endian int32s
	Text   string    `json:"text"`   // SHA-256 of the prefix's text: equal text, equal tokens
	State  int64     `json:"state"`  // bytes of the sequence state
	CRC    uint32    `json:"crc"`    // CRC-32C of the state
}

// savedPrefix is the file on disk, checked but for its state.
type savedPrefix struct {
	hdr    prefixHeader
	tokens []llama.Token
	offset int64     // where the state starts
	at     time.Time // when it was written
}

// prefixStore is the runner's prefix cache. The engine uses it from one
// generation at a time; a save's file is written in the background, so mu
// guards what that writer changes.
type prefixStore struct {
	cfg wire.PrefixCache
	key prefixKey

	writing sync.WaitGroup
	mu      sync.Mutex
	saved   *savedPrefix // the file's, when it is ours and whole (or being written)
	refused string       // digest of a prefix whose state was over the bound: not tried again
	note    string       // why a background write failed, told with the next done
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// openPrefixStore reads the saved header, if any; note says why a file that
// is there is not used.
func openPrefixStore(cfg wire.PrefixCache, key prefixKey) (*prefixStore, string) {
	p := &prefixStore{cfg: cfg, key: key}
	saved, err := readPrefixHeader(cfg.Path, key, cfg.MaxBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return p, ""
	case err != nil:
		return p, fmt.Sprintf("ignoring the saved prompt state %s: %v", cfg.Path, err)
	}
	p.saved = saved
	return p, ""
}

func readPrefixHeader(path string, key prefixKey, maxState int64) (*savedPrefix, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var head [len(prefixMagic) + 4]byte
	if _, err := io.ReadFull(f, head[:]); err != nil || string(head[:len(prefixMagic)]) != prefixMagic {
		return nil, errors.New("not a clawedge prompt state")
	}
	n := binary.LittleEndian.Uint32(head[len(prefixMagic):])
	if n > maxPrefixHeader {
		return nil, fmt.Errorf("damaged: a header of %d bytes", n)
	}
	raw := make([]byte, n)
	if _, err := io.ReadFull(f, raw); err != nil {
		return nil, errors.New("damaged: cut inside its header")
	}
	var h prefixHeader
	if err := json.Unmarshal(raw, &h); err != nil {
		return nil, fmt.Errorf("damaged header: %v", err)
	}
	if h.Key != key {
		return nil, fmt.Errorf("saved by another model or runner (%s; %s)", h.Key.Model, h.Key.Runner)
	}
	if h.Tokens <= 0 || h.Tokens > 1<<20 || h.State <= 0 {
		return nil, fmt.Errorf("damaged: %d tokens, %d bytes of state", h.Tokens, h.State)
	}
	if maxState > 0 && h.State > maxState {
		return nil, fmt.Errorf("its %d bytes of state exceed the bound of %d", h.State, maxState)
	}
	offset := int64(len(head)) + int64(n) + 4*int64(h.Tokens)
	if fi.Size() != offset+h.State {
		return nil, fmt.Errorf("damaged: %d bytes, the header says %d", fi.Size(), offset+h.State)
	}
	buf := make([]byte, 4*h.Tokens)
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, errors.New("damaged: cut inside its tokens")
	}
	tokens := make([]llama.Token, h.Tokens)
	for i := range tokens {
		tokens[i] = llama.Token(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	if tokenDigest(tokens) != h.Digest {
		return nil, errors.New("damaged: its tokens do not match their digest")
	}
	return &savedPrefix{hdr: h, tokens: tokens, offset: offset, at: fi.ModTime()}, nil
}

func tokenDigest(tokens []llama.Token) string {
	h := sha256.New()
	var b [4]byte
	for _, t := range tokens {
		binary.LittleEndian.PutUint32(b[:], uint32(t))
		h.Write(b[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func textDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// holds says whether the saved state is that of the prefix text.
func (p *prefixStore) holds(text string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.saved != nil && p.saved.hdr.Text == textDigest(text)
}

// match is how many leading tokens of prompt the saved state holds (0: none
// or no file).
func (p *prefixStore) match(prompt []llama.Token) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.saved == nil {
		return 0
	}
	return commonPrefix(p.saved.tokens, prompt)
}

// load puts the saved state into ctx's KV cache and returns its tokens. A
// state that fails its CRC or that llama.cpp refuses is dropped (the next
// prefix is saved in its place) and the error says why; the cache is then
// empty.
func (p *prefixStore) load(ctx *llama.Context) ([]llama.Token, error) {
	p.writing.Wait() // a write of this runner may still be on its way
	p.mu.Lock()
	s := p.saved
	p.mu.Unlock()
	if s == nil {
		return nil, errors.New("no saved state")
	}
	state, err := readState(p.cfg.Path, s)
	if err == nil {
		err = ctx.SetSeqState(state)
	}
	if err != nil {
		p.mu.Lock()
		if p.saved == s {
			p.saved = nil
		}
		p.mu.Unlock()
		return nil, fmt.Errorf("ignoring the saved prompt state %s: %w", p.cfg.Path, err)
	}
	return s.tokens, nil
}

func readState(path string, s *savedPrefix) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	state := make([]byte, s.hdr.State)
	if _, err := f.ReadAt(state, s.offset); err != nil {
		return nil, fmt.Errorf("reading its state: %w", err)
	}
	if crc32.Checksum(state, crcTable) != s.hdr.CRC {
		return nil, errors.New("damaged: its state fails its CRC")
	}
	return state, nil
}

// wants says whether the state of prefix should be saved: there is no usable
// file, or it holds another prefix saved at least ReplaceAfter ago; a prefix
// whose state was over the bound is not tried again.
func (p *prefixStore) wants(prefix []llama.Token) bool {
	if len(prefix) == 0 {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.refused != "" && p.refused == tokenDigest(prefix) {
		return false
	}
	if p.saved == nil {
		return true
	}
	if slices.Equal(p.saved.tokens, prefix) {
		return false
	}
	return time.Since(p.saved.at).Seconds() >= p.cfg.ReplaceAfter
}

// fits refuses a state of size bytes over the bound, and remembers the
// prefix so that it is not tried again.
func (p *prefixStore) fits(prefix []llama.Token, size int) error {
	if p.cfg.MaxBytes <= 0 || int64(size) <= p.cfg.MaxBytes {
		return nil
	}
	p.mu.Lock()
	p.refused = tokenDigest(prefix)
	p.mu.Unlock()
	return fmt.Errorf("the prompt prefix's state (%d tokens, %d bytes) is over the bound of %d bytes: not saved",
		len(prefix), size, p.cfg.MaxBytes)
}

// save writes state, the KV cache holding exactly prefix, to the file in the
// background: a temporary file beside it, synced, then renamed over it, so a
// power cut leaves the old file or the new one. A state over the bound is not
// written; the error says so.
func (p *prefixStore) save(prefix []llama.Token, text string, state []byte) error {
	if err := p.fits(prefix, len(state)); err != nil {
		return err
	}
	digest := tokenDigest(prefix)
	h := prefixHeader{Key: p.key, Tokens: len(prefix), Digest: digest, Text: textDigest(text), State: int64(len(state)),
		CRC: crc32.Checksum(state, crcTable)}
	raw, err := json.Marshal(h)
	if err != nil {
		return err
	}
	offset := int64(len(prefixMagic)+4+len(raw)) + 4*int64(len(prefix))
	s := &savedPrefix{hdr: h, tokens: slices.Clone(prefix), offset: offset, at: time.Now()}
	p.writing.Wait() // one writer at a time
	p.mu.Lock()
	p.saved = s
	p.mu.Unlock()
	p.writing.Add(1)
	go func() {
		defer p.writing.Done()
		if err := writePrefix(p.cfg.Path, raw, s.tokens, state); err != nil {
			p.mu.Lock()
			if p.saved == s {
				p.saved = nil
			}
			p.note = fmt.Sprintf("saving the prompt state %s: %v", p.cfg.Path, err)
			p.mu.Unlock()
		}
	}()
	return nil
}

func writePrefix(path string, header []byte, tokens []llama.Token, state []byte) error {
	var b bytes.Buffer
	b.WriteString(prefixMagic)
	binary.Write(&b, binary.LittleEndian, uint32(len(header)))
	b.Write(header)
	for _, t := range tokens {
		binary.Write(&b, binary.LittleEndian, uint32(t))
	}
	return atomicfile.WriteFunc(path, 0o600, func(w io.Writer) error {
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		_, err := w.Write(state)
		return err
	})
}

// takeNote returns (and clears) why a background write failed.
func (p *prefixStore) takeNote() string {
	if p == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.note
	p.note = ""
	return n
}

// close waits for a write under way.
func (p *prefixStore) close() { p.writing.Wait() }

// fileID names a file by path, size and modification time: a rebuilt runner
// or a replaced model is another one.
func fileID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return path + " (unknown)"
	}
	return fmt.Sprintf("%s %d %d", path, fi.Size(), fi.ModTime().UnixNano())
}

// runnerID is this runner and its llama.cpp, for prefixKey.
func runnerID() string {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	return fileID(exe) + "; " + fileID(llama.LibPath())
}
