package mqtt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/mqtt/mqtttest"
)

// FuzzPacketBounds feeds arbitrary bytes from the broker (outside input) to
// the packet-boundary counter, whole and in chunks of every size: it never
// panics, the chunking never changes the verdict, and a stream it accepts
// holds no packet over the bound.
func FuzzPacketBounds(f *testing.F) {
	for _, s := range []string{
		"\x20\x02\x00\x00",                 // CONNACK
		"\x30\x05\x00\x01ab\x00",           // PUBLISH
		"\x30\x80\x80\x40",                 // 1 MiB: over 1 MiB once the header counts
		"\x30\xff\xff\xff\x7f",             // 256 MiB
		"\x30\xff\xff\xff\xff\x01",         // a length of 5 bytes
		"\xd0\x00\xd0\x00\x90\x03\x00\x01", // PINGRESP, PINGRESP, SUBACK...
	} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		whole := packetBounds{max: 64}
		errWhole := whole.feed(data)
		parts := packetBounds{max: 64}
		var errParts error
		for rest := data; len(rest) > 0 && errParts == nil; {
			n := min(int(chunk)+1, len(rest))
			errParts = parts.feed(rest[:n])
			rest = rest[n:]
		}
		if (errWhole == nil) != (errParts == nil) {
			t.Fatalf("%q: whole %v, in chunks of %d %v", data, errWhole, int(chunk)+1, errParts)
		}
		if errWhole != nil && !errors.Is(errWhole, ErrPacketTooLarge) {
			t.Fatalf("%q: %v", data, errWhole)
		}
		if errWhole == nil {
			// Walk the packets again: each is within the bound.
			for i := 0; i < len(data); {
				length, n, mult := 0, 1, 1
				for ; i+n < len(data); n++ {
					length += int(data[i+n]&0x7f) * mult
					mult *= 128
					if data[i+n]&0x80 == 0 {
						break
					}
				}
				if 1+n+length > 64 && i+n < len(data) {
					t.Fatalf("%q: a packet of %d bytes accepted", data, 1+n+length)
				}
				i += 1 + n + length
			}
		}
	})
}

// TestOversizedMessage: a stranger on the broker publishes a 2 MiB message to
// a topic the board subscribes to; the board ends the connection before
// reading it into memory, says so with the size, reconnects, and its
// automations get the next message.
func TestOversizedMessage(t *testing.T) {
	t.Parallel() // each test has its own broker; most of their time is waiting on it
	b := mqtttest.Start(t, mqtttest.Options{})
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{})
	next, _ := h.ch.Messages("big/+")
	receive := func(what string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for got := ""; got != what; {
			b.Publish(t, "big/x", what, false)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			got, _ = next(ctx)
			cancel()
			if time.Now().After(deadline) {
				t.Fatalf("no message %q\n%s", what, h.log)
			}
		}
	}
	receive("before")
	big := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 2<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	b.PublishFile(t, "big/x", big, 0)
	receive("after")
	h.stop()
	if log := h.log.String(); !strings.Contains(log, "a packet from the broker is too large: 2097164 bytes") {
		t.Errorf("the oversized packet is not named with its size:\n%s", log)
	}
}
