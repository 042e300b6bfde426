package localmodel

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/clawedge/clawedge/internal/procfs"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// Memory is what loading a model will take, estimated before it is loaded:
// a model that does not fit would get the runner killed by the kernel (or
// the whole board swapping), so it is refused up front and the router can
// go remote instead.
type Memory struct {
	File    uint64 // the GGUF file, mapped whole
	KV      uint64 // the KV cache at the configured context
	Context int    // tokens the KV cache is sized for
}

// Total is the estimate.
func (m Memory) Total() uint64 { return m.File + m.KV }

// EstimateMemory estimates the memory of f at a context of n tokens: the
// file plus an f16 KV cache of layers × n × kv_heads × (key + value head
// size) × 2 bytes. Compute buffers are small next to these and left out.
func EstimateMemory(f *gguf.File, n int) (Memory, error) {
	m := Memory{File: uint64(max(f.Size, 0)), Context: n}
	arch := f.Architecture()
	get := func(key string) (uint64, bool) {
		v, ok := f.Get(arch + "." + key)
		if !ok {
			return 0, false
		}
		return v.AsUint()
	}
	layers, ok1 := get("block_count")
	heads, ok2 := get("attention.head_count")
	if !ok1 || !ok2 || heads == 0 {
		return m, fmt.Errorf("%s.block_count or .attention.head_count missing: no KV cache estimate", arch)
	}
	kvHeads, ok := get("attention.head_count_kv")
	if !ok || kvHeads == 0 {
		kvHeads = heads
	}
	width, _ := get("embedding_length")
	kDim, ok := get("attention.key_length")
	if !ok {
		kDim = width / heads
	}
	vDim, ok := get("attention.value_length")
	if !ok {
		vDim = kDim
	}
	m.KV = layers * uint64(n) * kvHeads * (kDim + vDim) * 2
	return m, nil
}

// MemoryError refuses a model too large for the memory available. It wraps
// llm.ErrCapacity.
type MemoryError struct {
	Model     string
	Need      Memory
	Available uint64 // MemAvailable
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("local model %s needs about %s (file %s + KV cache %s for %d tokens), but only %s of memory is available (MemAvailable): %v",
		filepath.Base(e.Model), bytesString(e.Need.Total()), bytesString(e.Need.File), bytesString(e.Need.KV),
		e.Need.Context, bytesString(e.Available), llm.ErrCapacity)
}

func (e *MemoryError) Unwrap() error { return llm.ErrCapacity }

// MemAvailable reads MemAvailable from a meminfo file (/proc/meminfo): the
// memory the kernel can hand out without swapping.
func MemAvailable(path string) (uint64, error) {
	return procfs.KB(path, "MemAvailable")
}

// bytesString is a size for people: "512 MiB", "1.4 GiB".
func bytesString(b uint64) string {
	const unit = 1024
	if b < unit {
		return strconv.FormatUint(b, 10) + " B"
	}
	div, exp := uint64(unit), 0
	for n := b / unit; n >= unit; n /= unit {
		div *= unit
		exp++
	}
	v := float64(b) / float64(div)
	prefix := "KMGTPE"[exp : exp+1]
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 1, 64) + " " + prefix + "iB"
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " " + prefix + "iB"
}
