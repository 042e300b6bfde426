package store

import (
	"errors"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// Agent sessions and the model-step audit. The store keeps them as opaque bytes (the
// agent owns their encoding, as JSON, so that old records decode in new builds and a
// record can be read with a hex dump in the field); what the store guarantees is
// atomicity and durability: every call below commits with an fsync before it returns.
//
// Layout (created on first write, so older files need no migration):
//
//	sessions       one nested bucket per session key:
//	                 "state"    -> the session's state record (small; rewritten at every transition)
//	                 "history"  -> its conversation (rewritten at the end of a turn only)
//	agent_steps    big-endian uint64 id -> one model step: its input digest and raw output
//
// State and history are separate keys so that a transition, which happens several times
// per turn, rewrites a few hundred bytes rather than the whole conversation.
var (
	bucketSessions = []byte("sessions")
	bucketSteps    = []byte("agent_steps")
	keyState       = []byte("state")
	keyHistory     = []byte("history")
)

// MaxSessionRecord caps one state or history value: a session is a chat, not a file
// store; the agent compacts its history well below this.
const MaxSessionRecord = 256 << 10

// MaxStepRecord caps one model-step record (the agent caps the raw output it puts in).
const MaxStepRecord = 64 << 10

func checkSessionKey(key string) error {
	switch {
	case key == "":
		return errors.New("store: empty session key")
	case len(key) > bolt.MaxKeySize:
		return fmt.Errorf("store: session key longer than %d bytes", bolt.MaxKeySize)
	}
	return nil
}

// SaveSession stores a session's state record and, when history is not nil, its
// history, in one fsynced transaction.
func (s *Store) SaveSession(key string, state, history []byte) error {
	_, err := s.SaveSessionSteps(key, state, history, nil)
	return err
}

// SaveSessionSteps is SaveSession that also appends model-step records (see
// RecordStep), in the same transaction: the agent writes a step with the transition
// that follows it, which is always committed before any call of that step runs, so
// "audit before effects" costs no commit of its own. It returns the last step's id.
func (s *Store) SaveSessionSteps(key string, state, history []byte, steps [][]byte) (uint64, error) {
	if err := checkSessionKey(key); err != nil {
		return 0, err
	}
	if len(state) > MaxSessionRecord || len(history) > MaxSessionRecord {
		return 0, fmt.Errorf("store: session %q: record larger than %d bytes", key, MaxSessionRecord)
	}
	for _, st := range steps {
		if len(st) > MaxStepRecord {
			return 0, fmt.Errorf("store: step record of %d bytes is larger than %d", len(st), MaxStepRecord)
		}
	}
	var last uint64
	err := s.update(func(tx *bolt.Tx) error {
		if len(steps) > 0 {
			sb, err := tx.CreateBucketIfNotExists(bucketSteps)
			if err != nil {
				return err
			}
			for _, st := range steps {
				n, err := sb.NextSequence()
				if err != nil {
					return err
				}
				if err := sb.Put(u64(n), st); err != nil {
					return err
				}
				last = n
			}
		}
		root, err := tx.CreateBucketIfNotExists(bucketSessions)
		if err != nil {
			return err
		}
		b, err := root.CreateBucketIfNotExists([]byte(key))
		if err != nil {
			return err
		}
		if err := b.Put(keyState, state); err != nil {
			return err
		}
		if history != nil {
			return b.Put(keyHistory, history)
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: save session %q: %w", key, err)
	}
	return last, nil
}

// LoadSession returns copies of a session's state and history records.
func (s *Store) LoadSession(key string) (state, history []byte, found bool, err error) {
	if err := checkSessionKey(key); err != nil {
		return nil, nil, false, err
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketSessions)
		if root == nil {
			return nil
		}
		b := root.Bucket([]byte(key))
		if b == nil {
			return nil
		}
		found = true
		if v := b.Get(keyState); v != nil {
			state = append([]byte{}, v...)
		}
		if v := b.Get(keyHistory); v != nil {
			history = append([]byte{}, v...)
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, fmt.Errorf("store: load session %q: %w", key, err)
	}
	return state, history, found, nil
}

// Sessions calls fn with every session's key and state record (a copy), in key order.
func (s *Store) Sessions(fn func(key string, state []byte) error) error {
	var keys []string
	var states [][]byte
	err := s.db.View(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketSessions)
		if root == nil {
			return nil
		}
		return root.ForEachBucket(func(k []byte) error {
			keys = append(keys, string(k))
			states = append(states, append([]byte{}, root.Bucket(k).Get(keyState)...))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: list sessions: %w", err)
	}
	// fn runs outside the transaction, so it may write (a recovery saves what it found).
	for i, k := range keys {
		if err := fn(k, states[i]); err != nil {
			return err
		}
	}
	return nil
}

// DeleteSession forgets a session; a missing one is not an error.
func (s *Store) DeleteSession(key string) error {
	if err := checkSessionKey(key); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		root := tx.Bucket(bucketSessions)
		if root == nil || root.Bucket([]byte(key)) == nil {
			return nil
		}
		return root.DeleteBucket([]byte(key))
	})
	if err != nil {
		return fmt.Errorf("store: delete session %q: %w", key, err)
	}
	return nil
}

// RecordStep appends one model step record and returns its id, after the commit:
// the agent calls it with a step's raw output before any tool of that step runs.
func (s *Store) RecordStep(rec []byte) (uint64, error) {
	if len(rec) > MaxStepRecord {
		return 0, fmt.Errorf("store: step record of %d bytes is larger than %d", len(rec), MaxStepRecord)
	}
	var id uint64
	err := s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketSteps)
		if err != nil {
			return err
		}
		n, err := b.NextSequence()
		if err != nil {
			return err
		}
		id = n
		return b.Put(u64(n), rec)
	})
	if err != nil {
		return 0, fmt.Errorf("store: record model step: %w", err)
	}
	return id, nil
}

// StepRecord is one stored model step.
type StepRecord struct {
	ID   uint64
	Data []byte
}

// StepsTail returns the last n step records, oldest first.
func (s *Store) StepsTail(n int) ([]StepRecord, error) {
	if n <= 0 {
		return nil, nil
	}
	var out []StepRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSteps)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		k, v := c.Last()
		var err error
		out, err = collect(k, v, c.Prev, n, decodeStep)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: last model steps: %w", err)
	}
	slices.Reverse(out)
	return out, nil
}

// StepsSince returns up to max step records with an id above afterID, oldest first
// (max <= 0: all).
func (s *Store) StepsSince(afterID uint64, max int) ([]StepRecord, error) {
	var out []StepRecord
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSteps)
		if b == nil || afterID == ^uint64(0) {
			return nil
		}
		c := b.Cursor()
		k, v := c.Seek(u64(afterID + 1))
		var err error
		out, err = collect(k, v, c.Next, max, decodeStep)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: model steps since #%d: %w", afterID, err)
	}
	return out, nil
}
