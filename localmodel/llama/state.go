//go:build llamacpp

package llama

/*
#include <stdint.h>
#include "llama.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// StateSize is the number of bytes SeqState would return now: it grows with
// the tokens in the KV cache, so a caller bounds what it saves before copying.
func (c *Context) StateSize() int { return int(C.llama_state_seq_get_size(c.c, 0)) }

// SeqState copies the KV cache of the single sequence (its cells, positions
// and K/V tensors) into Go memory, in llama.cpp's own format: SetSeqState of
// the same library and model puts it back.
func (c *Context) SeqState() ([]byte, error) {
	n := C.llama_state_seq_get_size(c.c, 0)
	if n == 0 {
		return nil, errors.New("llama: the sequence has no state to save")
	}
	buf := make([]byte, int(n))
	got := C.llama_state_seq_get_data(c.c, (*C.uint8_t)(unsafe.Pointer(&buf[0])), n, 0)
	if got != n {
		return nil, fmt.Errorf("llama: saving the sequence state wrote %d of %d bytes", int(got), int(n))
	}
	return buf, nil
}

// SetSeqState replaces the KV cache with a state SeqState returned. llama.cpp
// checks its shape (layers, cell count, tensor types and sizes) and refuses
// one of another model or context; the K/V values themselves are not
// checked, so the caller keeps a checksum. After an error the cache is empty.
func (c *Context) SetSeqState(data []byte) error {
	c.ClearKV()
	if len(data) == 0 {
		return errors.New("llama: empty sequence state")
	}
	if C.llama_state_seq_set_data(c.c, (*C.uint8_t)(unsafe.Pointer(&data[0])), C.size_t(len(data)), 0) == 0 {
		c.ClearKV()
		return errors.New("llama: the sequence state does not fit this model and context")
	}
	return nil
}
