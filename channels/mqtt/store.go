package mqtt

import (
	"bytes"
	"sync"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// copyStore is paho's in-flight store, as its MemoryStore, but holding each
// packet as its bytes and giving a new packet on every Get, as paho's
// FileStore does. With the MemoryStore, a reconnection's resume marks a
// stored publish as a duplicate (its DUP flag) while the new connection's
// writer may be encoding that very packet: a data race inside paho
// (eclipse-paho/paho.mqtt.golang#703, open in v1.5.1) that the race
// detector found in the test command. A copy is what resume then changes.
type copyStore struct {
	mu   sync.Mutex
	open bool
	m    map[string][]byte
}

var _ paho.Store = (*copyStore)(nil)

func (s *copyStore) Open() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.open = true
}

// Put keeps message's bytes; a packet that cannot be written is not kept
// (paho then has nothing to resend, as after a clean session).
func (s *copyStore) Put(key string, message packets.ControlPacket) {
	var b bytes.Buffer
	if err := message.Write(&b); err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open {
		s.m[key] = b.Bytes()
	}
}

// Get is a new packet read from the kept bytes, nil when there are none.
func (s *copyStore) Get(key string) packets.ControlPacket {
	s.mu.Lock()
	raw, ok := s.m[key]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	p, err := packets.ReadPacket(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	return p
}

func (s *copyStore) All() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.m))
	for k := range s.m {
		keys = append(keys, k)
	}
	return keys
}

func (s *copyStore) Del(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

func (s *copyStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = false
}

func (s *copyStore) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = map[string][]byte{}
}
