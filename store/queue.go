package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Queues are durable inboxes for channels that receive messages from a service which
// redelivers until told otherwise (Telegram's getUpdates offset, a broker's ack). The
// contract that makes "nothing lost, nothing done twice" hold across a crash at any moment:
//
//   - Enqueue stores a batch of items and the channel's new offset in ONE transaction. The
//     channel acknowledges to the service (asks from the new offset) only after that commit,
//     so an item is either durably queued or still redelivered — never neither.
//   - Items are keyed by the service's id and remembered after they are done (a bounded
//     "seen" set), so a redelivered item is dropped, not queued twice.
//   - QueueIntent records a tool call's audit intent and marks the item started in ONE
//     transaction. An item that is still "queued" after a crash has had no effect and is
//     simply processed again; one that is "started" had at least one effect begin and is
//     never rerun (the caller reports it, with the audit entries QueueItem.Audit lists).
//   - Done removes the item once its reply is delivered.
//
// Layout, under the root bucket "queues", one nested bucket per queue name:
//
//	meta        "offset" -> big-endian uint64; "seen_count" -> big-endian uint64
//	items       big-endian uint64 id -> JSON item (see queueRecord)
//	seen        big-endian uint64 id -> big-endian uint64 insertion number
//	seen_order  big-endian uint64 insertion number -> big-endian uint64 id
//
// The seen set is pruned oldest-inserted first (not lowest id first: Telegram may restart
// its update ids at a random lower value after a quiet week).

// QueueState is where an item is in its life.
type QueueState string

const (
	// Queued: stored, nothing has happened yet; safe to process (again) after a crash.
	Queued QueueState = "queued"
	// Started: at least one effect began (an audit intent was recorded for it, or the
	// caller called Start); it must not be processed again.
	Started QueueState = "started"
)

// MaxQueueSeen is how many done or queued ids a queue remembers to drop redeliveries.
const MaxQueueSeen = 4096

// MaxQueueData caps one item's payload; an item is one message, not a file.
const MaxQueueData = 256 << 10

// QueueItem is one durable message.
type QueueItem struct {
	ID      uint64     // the service's id (Telegram's update_id)
	State   QueueState // Queued or Started
	Data    []byte     // the caller's payload (the raw update)
	Queued  time.Time  // when it was enqueued (UTC)
	Started time.Time  // when it was started, if it was
	Audit   []uint64   // the audit intents recorded for it, in order
}

type queueRecord struct {
	State   QueueState      `json:"state"`
	Data    json.RawMessage `json:"data,omitempty"`
	Raw     []byte          `json:"raw,omitempty"` // used when Data is not JSON
	Queued  time.Time       `json:"queued"`
	Started time.Time       `json:"started,omitzero"`
	Audit   []uint64        `json:"audit,omitempty"`
}

var (
	bucketQueues    = []byte("queues")
	qMeta           = []byte("meta")
	qItems          = []byte("items")
	qSeen           = []byte("seen")
	qSeenOrder      = []byte("seen_order")
	keyQueueOffset  = []byte("offset")
	keySeenCount    = []byte("seen_count")
	errEmptyQueue   = errors.New("store: empty queue name")
	ErrNoQueueItem  = errors.New("no such queue item")
	ErrItemTooLarge = errors.New("queue item too large")
)

func checkQueue(name string) error {
	switch {
	case name == "":
		return errEmptyQueue
	case len(name) > bolt.MaxKeySize:
		return fmt.Errorf("store: queue name longer than %d bytes", bolt.MaxKeySize)
	}
	return nil
}

// queueBuckets returns the queue's buckets, creating them in a write transaction.
func queueBuckets(tx *bolt.Tx, name string, create bool) (meta, items, seen, order *bolt.Bucket, err error) {
	root := tx.Bucket(bucketQueues)
	if root == nil {
		if !create {
			return nil, nil, nil, nil, nil
		}
		if root, err = tx.CreateBucketIfNotExists(bucketQueues); err != nil {
			return
		}
	}
	q := root.Bucket([]byte(name))
	if q == nil {
		if !create {
			return nil, nil, nil, nil, nil
		}
		if q, err = root.CreateBucket([]byte(name)); err != nil {
			return
		}
		for _, b := range [][]byte{qMeta, qItems, qSeen, qSeenOrder} {
			if _, err = q.CreateBucket(b); err != nil {
				return
			}
		}
	}
	return q.Bucket(qMeta), q.Bucket(qItems), q.Bucket(qSeen), q.Bucket(qSeenOrder), nil
}

// QueueOffset returns the queue's offset as last stored by Enqueue, and whether one was.
func (s *Store) QueueOffset(queue string) (uint64, bool, error) {
	if err := checkQueue(queue); err != nil {
		return 0, false, err
	}
	var off uint64
	var found bool
	err := s.db.View(func(tx *bolt.Tx) error {
		meta, _, _, _, err := queueBuckets(tx, queue, false)
		if err != nil || meta == nil {
			return err
		}
		if v := meta.Get(keyQueueOffset); len(v) == 8 {
			off, found = binary.BigEndian.Uint64(v), true
		}
		return nil
	})
	if err != nil {
		return 0, false, fmt.Errorf("store: queue %s offset: %w", queue, err)
	}
	return off, found, nil
}

// NewQueueItem is what Enqueue stores: the service's id and the payload.
type NewQueueItem struct {
	ID   uint64
	Data []byte
}

// Enqueue stores items not seen before and sets the queue's offset, in one fsynced
// transaction, and returns the ids it added (redeliveries are left out). An empty batch
// just moves the offset: updates the caller handled without queueing still count as read.
func (s *Store) Enqueue(queue string, offset uint64, items []NewQueueItem) ([]uint64, error) {
	if err := checkQueue(queue); err != nil {
		return nil, err
	}
	for _, it := range items {
		if len(it.Data) > MaxQueueData {
			return nil, fmt.Errorf("store: queue %s item %d: %w (%d bytes, at most %d)", queue, it.ID, ErrItemTooLarge, len(it.Data), MaxQueueData)
		}
	}
	var added []uint64
	now := s.now()
	err := s.update(func(tx *bolt.Tx) error {
		added = added[:0]
		meta, itemsB, seen, order, err := queueBuckets(tx, queue, true)
		if err != nil {
			return err
		}
		for _, it := range items {
			key := u64(it.ID)
			if seen.Get(key) != nil || itemsB.Get(key) != nil {
				continue // a redelivery
			}
			rec := queueRecord{State: Queued, Queued: now}
			if json.Valid(it.Data) {
				rec.Data = it.Data
			} else {
				rec.Raw = it.Data
			}
			val, err := json.Marshal(rec)
			if err != nil {
				return err
			}
			if err := itemsB.Put(key, val); err != nil {
				return err
			}
			n, err := order.NextSequence()
			if err != nil {
				return err
			}
			if err := seen.Put(key, u64(n)); err != nil {
				return err
			}
			if err := order.Put(u64(n), key); err != nil {
				return err
			}
			added = append(added, it.ID)
		}
		if err := pruneSeen(meta, seen, order, itemsB, len(added)); err != nil {
			return err
		}
		return meta.Put(keyQueueOffset, u64(offset))
	})
	if err != nil {
		return nil, fmt.Errorf("store: enqueue on %s: %w", queue, err)
	}
	return added, nil
}

// seenLimit is MaxQueueSeen; a variable so that tests need not write thousands of items.
var seenLimit = MaxQueueSeen

// pruneSeen forgets the oldest-inserted ids beyond seenLimit, except ids still queued.
// The count is kept in meta: bbolt's bucket statistics do not see a write transaction's
// own uncommitted changes.
func pruneSeen(meta, seen, order, items *bolt.Bucket, added int) error {
	n := added
	if v := meta.Get(keySeenCount); len(v) == 8 {
		n += int(binary.BigEndian.Uint64(v))
	}
	var drop [][2][]byte
	c := order.Cursor()
	for k, v := c.First(); k != nil && n-len(drop) > seenLimit; k, v = c.Next() {
		if items.Get(v) != nil {
			continue // still queued: its id must stay known
		}
		drop = append(drop, [2][]byte{append([]byte{}, k...), append([]byte{}, v...)})
	}
	for _, d := range drop {
		if err := order.Delete(d[0]); err != nil {
			return err
		}
		if err := seen.Delete(d[1]); err != nil {
			return err
		}
	}
	return meta.Put(keySeenCount, u64(uint64(n-len(drop))))
}

// QueueItems returns up to max items (max <= 0: all) that are not done, lowest id first.
func (s *Store) QueueItems(queue string, max int) ([]QueueItem, error) {
	if err := checkQueue(queue); err != nil {
		return nil, err
	}
	var out []QueueItem
	err := s.db.View(func(tx *bolt.Tx) error {
		_, items, _, _, err := queueBuckets(tx, queue, false)
		if err != nil || items == nil {
			return err
		}
		c := items.Cursor()
		k, v := c.First()
		out, err = collect(k, v, c.Next, max, decodeQueueItem)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: queue %s items: %w", queue, err)
	}
	return out, nil
}

// QueueItem returns one item that is not done.
func (s *Store) QueueItem(queue string, id uint64) (QueueItem, error) {
	if err := checkQueue(queue); err != nil {
		return QueueItem{}, err
	}
	var it QueueItem
	err := s.db.View(func(tx *bolt.Tx) error {
		_, v, err := itemRecord(tx, queue, id)
		if err != nil {
			return err
		}
		it, err = decodeQueueItem(u64(id), v)
		return err
	})
	if err != nil {
		return QueueItem{}, fmt.Errorf("store: queue %s item %d: %w", queue, id, err)
	}
	return it, nil
}

func decodeQueueItem(k, v []byte) (QueueItem, error) {
	if len(k) != 8 {
		return QueueItem{}, fmt.Errorf("queue key %x is not 8 bytes", k)
	}
	var r queueRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return QueueItem{}, fmt.Errorf("decode item %d: %w", binary.BigEndian.Uint64(k), err)
	}
	data := []byte(r.Data)
	if r.Raw != nil {
		data = r.Raw
	}
	return QueueItem{ID: binary.BigEndian.Uint64(k), State: r.State, Data: data, Queued: r.Queued,
		Started: r.Started, Audit: r.Audit}, nil
}

// itemRecord returns the bucket of queue's items and item id's record in it, or
// ErrNoQueueItem.
func itemRecord(tx *bolt.Tx, queue string, id uint64) (*bolt.Bucket, []byte, error) {
	_, items, _, _, err := queueBuckets(tx, queue, false)
	if err != nil {
		return nil, nil, err
	}
	var v []byte
	if items != nil {
		v = items.Get(u64(id))
	}
	if v == nil {
		return nil, nil, ErrNoQueueItem
	}
	return items, v, nil
}

// updateItem applies fn to an item's record inside tx.
func updateItem(tx *bolt.Tx, queue string, id uint64, fn func(*queueRecord) error) error {
	items, v, err := itemRecord(tx, queue, id)
	if err != nil {
		return err
	}
	var r queueRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return fmt.Errorf("decode item %d: %w", id, err)
	}
	if err := fn(&r); err != nil {
		return err
	}
	val, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return items.Put(u64(id), val)
}

// QueueStart marks an item started without an audit intent: for effects that are not
// tool calls. It is idempotent.
func (s *Store) QueueStart(queue string, id uint64) error {
	if err := checkQueue(queue); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		return updateItem(tx, queue, id, func(r *queueRecord) error {
			if r.State != Started {
				r.State, r.Started = Started, s.now()
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("store: start %s item %d: %w", queue, id, err)
	}
	return nil
}

// QueueIntent records an audit intent (like Intent) for a call made on behalf of a queue
// item, and marks the item started, in one transaction: after a crash the item is either
// untouched (queued, no intent) or started with the intent on record — never a recorded
// effect on an item that would be processed again.
func (s *Store) QueueIntent(queue string, item uint64, who, channel, command string) (uint64, error) {
	if err := checkQueue(queue); err != nil {
		return 0, err
	}
	val, err := s.intentRecord(who, channel, command)
	if err != nil {
		return 0, err
	}
	var id uint64
	err = s.update(func(tx *bolt.Tx) error {
		n, err := putIntent(tx, val)
		if err != nil {
			return err
		}
		// One transaction: a missing item undoes the intent too.
		if err := updateItem(tx, queue, item, func(r *queueRecord) error {
			if r.State != Started {
				r.State, r.Started = Started, s.now()
			}
			r.Audit = append(r.Audit, n)
			return nil
		}); err != nil {
			return err
		}
		id = n
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("store: record intent for %s item %d: %w", queue, item, err)
	}
	return id, nil
}

// QueueDone removes a finished item (its reply delivered). The id stays in the seen set.
// Removing an item that is not there is not an error: done is idempotent.
func (s *Store) QueueDone(queue string, id uint64) error {
	if err := checkQueue(queue); err != nil {
		return err
	}
	err := s.update(func(tx *bolt.Tx) error {
		_, items, _, _, err := queueBuckets(tx, queue, false)
		if err != nil || items == nil {
			return err
		}
		return items.Delete(u64(id))
	})
	if err != nil {
		return fmt.Errorf("store: done %s item %d: %w", queue, id, err)
	}
	return nil
}

// AuditEntries returns the audit entries with the given ids (missing ones are left out),
// in the order asked.
func (s *Store) AuditEntries(ids []uint64) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAudit)
		for _, id := range ids {
			v := b.Get(u64(id))
			if v == nil {
				continue
			}
			e, err := decodeEntry(u64(id), v)
			if err != nil {
				return err
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: audit entries: %w", err)
	}
	return out, nil
}
