package store

// This file: the audit records of read-only calls (tools.ReadAuditor). A read
// has no effect to record an intent for, so its entry (intent and outcome at
// once) is written after it ran, grouped with the other reads of the next
// moments into one commit: an automation polling a pin every second costs one
// fsync every few seconds, not two a second. A power cut loses at most the
// reads of the last readFlushEvery, which changed nothing. Anyone reading the
// trail (Tail, AuditSince) sees them: reading flushes first.

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
)

// How long and how many reads wait for their group commit.
const (
	readFlushEvery = 30 * time.Second
	readFlushAt    = 128
)

type readBatch struct {
	mu    sync.Mutex
	recs  [][]byte
	timer *time.Timer
}

// Read records a read-only call that ran, in the next group commit.
func (s *Store) Read(who, channel, command string, ok bool, detail string) error {
	now := s.now()
	val, err := json.Marshal(record{Time: now, Who: CapString(who, MaxWho), Channel: CapString(channel, MaxWho),
		Command: CapString(command, MaxCommand), Done: true, DoneTime: now, OK: ok, Detail: CapString(detail, MaxDetail)})
	if err != nil {
		return fmt.Errorf("store: encode read: %w", err)
	}
	s.reads.mu.Lock()
	s.reads.recs = append(s.reads.recs, val)
	n := len(s.reads.recs)
	if n == 1 {
		s.reads.timer = time.AfterFunc(readFlushEvery, func() { s.flushReads() })
	}
	s.reads.mu.Unlock()
	if n >= readFlushAt {
		return s.flushReads()
	}
	return nil
}

// flushReads commits the reads waiting, in one transaction.
func (s *Store) flushReads() error {
	s.reads.mu.Lock()
	recs := s.reads.recs
	s.reads.recs = nil
	if s.reads.timer != nil {
		s.reads.timer.Stop()
		s.reads.timer = nil
	}
	s.reads.mu.Unlock()
	if len(recs) == 0 || s.ro {
		return nil
	}
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		for _, val := range recs {
			n, err := b.NextSequence()
			if err != nil {
				return err
			}
			if err := b.Put(u64(n), val); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: record %d reads: %w", len(recs), err)
	}
	return nil
}
