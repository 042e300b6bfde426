package mqtt

import (
	"testing"

	"github.com/eclipse/paho.mqtt.golang/packets"
)

// TestCopyStoreGivesCopies: what paho's resume changes in a packet it got
// (the DUP flag) is not the packet a writer may be encoding: each Get is a
// new packet with the stored content; Del and Reset forget.
func TestCopyStoreGivesCopies(t *testing.T) {
	var s copyStore
	s.Open()
	p := packets.NewControlPacket(packets.Publish).(*packets.PublishPacket)
	p.TopicName, p.Qos, p.MessageID, p.Payload = "clawedge/board/led/set", 1, 7, []byte("ON")
	s.Put("o.7", p)
	got, ok := s.Get("o.7").(*packets.PublishPacket)
	if !ok || got == p || got.TopicName != p.TopicName || got.MessageID != 7 || string(got.Payload) != "ON" || got.Qos != 1 {
		t.Fatalf("Get = %#v, want a copy of %#v", got, p)
	}
	got.Dup = true
	if p.Dup {
		t.Fatal("changing the copy changed the packet put")
	}
	if again := s.Get("o.7").(*packets.PublishPacket); again.Dup || again == got {
		t.Fatal("the second Get is not a fresh copy of what was put")
	}
	if keys := s.All(); len(keys) != 1 || keys[0] != "o.7" {
		t.Fatalf("All = %v", keys)
	}
	s.Del("o.7")
	if s.Get("o.7") != nil {
		t.Fatal("Del kept the packet")
	}
	s.Put("o.8", p)
	s.Reset()
	if len(s.All()) != 0 {
		t.Fatal("Reset kept packets")
	}
	s.Close()
	s.Put("o.9", p)
	if s.Get("o.9") != nil {
		t.Fatal("a closed store kept a packet")
	}
}
