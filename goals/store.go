package goals

// This file: goals in the store. One record per goal, written whole with each
// move (store.Put commits with an fsync), so a record is never half of one
// move and half of another.

import (
	"encoding/json"
	"fmt"
)

// KV is the part of the store goals use (store.Store has it).
type KV interface {
	Put(bucket, key string, value []byte) error
	Get(bucket, key string) ([]byte, bool, error)
	Values(bucket string) (keys []string, values [][]byte, err error)
}

// bucket is the store namespace of the goals.
const bucket = "goals"

func save(kv KV, g *Goal) error {
	b, err := json.Marshal(g)
	if err != nil {
		return fmt.Errorf("goal %s: %w", g.ID, err)
	}
	if err := kv.Put(bucket, g.ID, b); err != nil {
		return fmt.Errorf("goal %s: %w", g.ID, err)
	}
	return nil
}

// load reads every goal; a record that cannot be read is reported by its key
// and skipped, so one damaged record does not hide the others.
func load(kv KV) (goals []*Goal, bad []error, err error) {
	keys, values, err := kv.Values(bucket)
	if err != nil {
		return nil, nil, err
	}
	for i, v := range values {
		g := &Goal{}
		if err := json.Unmarshal(v, g); err != nil {
			bad = append(bad, fmt.Errorf("goal record %q: %w", keys[i], err))
			continue
		}
		goals = append(goals, g)
	}
	return goals, bad, nil
}
