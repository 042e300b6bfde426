package store

import (
	"encoding/binary"
	"errors"
)

// errSkip is what a decoder given to collect returns for a record to pass
// over (a key that is not a record's).
var errSkip = errors.New("skip")

// collect decodes the records of a bucket from k, v on, moving the cursor
// with next (Next: oldest first, Prev: newest first), until there are no
// more or it has max (max <= 0: no limit). The audit trail, the queues and
// the model steps are all read this way.
func collect[T any](k, v []byte, next func() ([]byte, []byte), max int, decode func(k, v []byte) (T, error)) ([]T, error) {
	var out []T
	for ; k != nil && (max <= 0 || len(out) < max); k, v = next() {
		x, err := decode(k, v)
		if errors.Is(err, errSkip) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// decodeStep reads a model-step record; a key that is not an 8-byte id is
// skipped.
func decodeStep(k, v []byte) (StepRecord, error) {
	if len(k) != 8 {
		return StepRecord{}, errSkip
	}
	return StepRecord{ID: binary.BigEndian.Uint64(k), Data: append([]byte{}, v...)}, nil
}
