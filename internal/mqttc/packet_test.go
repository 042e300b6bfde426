package mqttc

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
	"time"
)

func read(b []byte) (*packet, error) { return readPacket(bufio.NewReader(bytes.NewReader(b))) }

func TestPublishRoundTrip(t *testing.T) {
	big := strings.Repeat("x", 300) // a two-byte remaining length
	for _, c := range []struct {
		qos    byte
		retain bool
		id     uint16
	}{{0, false, 0}, {1, true, 7}} {
		p, err := read(publishPacket("a/b", c.qos, c.retain, c.id, big))
		if err != nil {
			t.Fatal(err)
		}
		if p.typ != typePublish || p.topic != "a/b" || string(p.payload) != big || p.qos() != c.qos || p.id != c.id || (p.flags&1 != 0) != c.retain {
			t.Errorf("%+v: got %+v", c, p)
		}
	}
}

func TestConnectPacket(t *testing.T) {
	o := &Options{ClientID: "id", Username: "u", Password: "p", KeepAlive: 30 * time.Second,
		Will: &Will{Topic: "s", Payload: "offline", QoS: 1, Retain: true}}
	want := "\x10\x20\x00\x04MQTT\x04\xec\x00\x1e\x00\x02id\x00\x01s\x00\x07offline\x00\x01u\x00\x01p"
	if got := string(connectPacket(o)); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	o = &Options{ClientID: "id", CleanSession: true, KeepAlive: time.Minute}
	if got := string(connectPacket(o)); got != "\x10\x0e\x00\x04MQTT\x04\x02\x00\x3c\x00\x02id" {
		t.Errorf("got %q", got)
	}
}

func TestBadPackets(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"\x20\x03\x00\x00\x00", "packet type 2 of 3 bytes, want 2"},
		{"\x21\x02\x00\x00", "flags 0x1, want 0x0"},
		{"\x34\x05\x00\x01a\x00\x01", "QoS 2"},
		{"\x32\x03\x00\x01a", "without a packet id"},
		{"\x32\x05\x00\x01a\x00\x00", "packet id 0"},
		{"\x30\x02\x00\x05", "topic of 5 bytes in 0"},
		{"\x30\x02\x00\x00", "empty or not UTF-8"},
		{"\x30\x04\x00\x02\xff\xfe", "empty or not UTF-8"},
		{"\x90\x02\x00\x01", "SUBACK of 2 bytes"},
		{"\x10\x00", "unexpected packet type 1"},
		{"\x30\xff\xff\xff\xff\x01", "longer than 4 bytes"},
		{"\x30\x80\x80\x80\x01", "a packet of 2097152 bytes"},
	} {
		if _, err := read([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: err %v, want %q", c.in, err, c.err)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		filter, topic string
		want          bool
	}{
		{"a/b", "a/b", true}, {"a/b", "a/c", false}, {"a/+", "a/b", true}, {"a/+", "a/b/c", false},
		{"a/#", "a", true}, {"a/#", "a/b/c", true}, {"#", "a/b", true}, {"+/+", "a/b", true},
		{"+", "$SYS", false}, {"#", "$SYS/x", false}, {"$SYS/#", "$SYS/x", true}, {"a/+/c", "a//c", true},
		{"a", "a/b", false}, {"a/b/c", "a/b", false},
	} {
		if got := Match(c.filter, c.topic); got != c.want {
			t.Errorf("Match(%q, %q) = %v", c.filter, c.topic, got)
		}
	}
}

// FuzzReadPacket: whatever a broker sends, readPacket returns a packet or an
// error, never panics, and a PUBLISH it accepts encodes back to the same bytes.
func FuzzReadPacket(f *testing.F) {
	f.Add(publishPacket("clawedge/garage/relay/set", 1, false, 3, "ON"))
	f.Add(publishPacket("t", 0, true, 0, ""))
	f.Add([]byte("\x20\x02\x00\x05"))
	f.Add([]byte("\x90\x03\x00\x01\x80"))
	f.Add([]byte("\xd0\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := read(b)
		if err != nil || p.typ != typePublish {
			return
		}
		again := publishPacket(p.topic, p.qos(), p.flags&1 != 0, p.id, string(p.payload))
		q, err := read(again)
		if err != nil || q.topic != p.topic || !bytes.Equal(q.payload, p.payload) || q.id != p.id || q.flags&7 != p.flags&7 {
			t.Fatalf("%q re-encoded as %q: %+v %v", b, again, q, err)
		}
	})
}
