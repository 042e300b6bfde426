package store

// QueueAuditor is the audit trail of the calls made on behalf of one queue
// item: each call's intent is recorded together with "this item has started"
// in one transaction (QueueIntent), so that after a crash the item is either
// untouched or started with the intent on record. Channels with a durable inbox
// (Telegram, MQTT) give each item's runner one; it is a tools.Auditor.
type QueueAuditor struct {
	Store *Store
	Queue string
	Item  uint64
}

// Intent records a call's intent and marks the item started.
func (a QueueAuditor) Intent(who, channel, command string) (uint64, error) {
	return a.Store.QueueIntent(a.Queue, a.Item, who, channel, command)
}

// Outcome records a call's outcome.
func (a QueueAuditor) Outcome(id uint64, ok bool, detail string) error {
	return a.Store.Outcome(id, ok, detail)
}
