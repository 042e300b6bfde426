package mqtt

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// paho reads a packet of any size the protocol allows (256 MiB) into memory.
// Anyone who may publish on the broker can send one to a topic the board
// subscribes to, so the bytes from the broker pass through a counter of
// packet boundaries first: a packet over maxInbound ends the connection with
// an error naming its size, before paho allocates it. The commands and
// automation messages this channel takes are a few bytes.

// maxInbound bounds a packet from the broker: its fixed header and body.
const maxInbound = 1 << 20

// ErrPacketTooLarge is in the error of a connection ended by a packet over
// maxInbound (or whose length is not MQTT's variable-length integer).
var ErrPacketTooLarge = errors.New("mqtt: a packet from the broker is too large")

// packetBounds follows the packets of an MQTT byte stream (fixed header:
// one type byte, then the remaining length in 1 to 4 bytes of 7 bits, low
// first, the high bit meaning more; then that many bytes).
type packetBounds struct {
	max    int
	inLen  bool // reading the remaining length
	lenN   int  // bytes of it read
	length int  // the remaining length so far
	body   int  // body bytes still to come
}

// feed follows b; it fails on a packet over max or a malformed length.
func (pb *packetBounds) feed(b []byte) error {
	for len(b) > 0 {
		switch {
		case pb.body > 0:
			n := min(pb.body, len(b))
			pb.body -= n
			b = b[n:]
		case !pb.inLen: // a packet's type byte
			pb.inLen, pb.lenN, pb.length = true, 0, 0
			b = b[1:]
		default:
			c := b[0]
			b = b[1:]
			pb.length |= int(c&0x7f) << (7 * pb.lenN)
			pb.lenN++
			if c&0x80 != 0 {
				if pb.lenN == 4 {
					return fmt.Errorf("%w: its length has more than 4 bytes", ErrPacketTooLarge)
				}
				continue
			}
			if size := 1 + pb.lenN + pb.length; size > pb.max {
				return fmt.Errorf("%w: %d bytes (at most %d are taken)", ErrPacketTooLarge, size, pb.max)
			}
			pb.inLen, pb.body = false, pb.length
		}
	}
	return nil
}

// boundedConn is a connection to the broker whose reads pass packetBounds.
type boundedConn struct {
	net.Conn
	bounds packetBounds // paho's one reading goroutine only

	mu  sync.Mutex
	err error // set once a packet was over the bound
}

// tooLarge is the error that ended the connection, if a packet over the
// bound did.
func (bc *boundedConn) tooLarge() error {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.err
}

func newBoundedConn(nc net.Conn) *boundedConn {
	return &boundedConn{Conn: nc, bounds: packetBounds{max: maxInbound}}
}

// Read reads on; once a packet is over the bound, it closes the connection
// and fails from then on (the bytes of the packet already read are given to
// paho, which is waiting for the rest of it and gets the error instead).
func (bc *boundedConn) Read(p []byte) (int, error) {
	if err := bc.tooLarge(); err != nil {
		return 0, err
	}
	n, err := bc.Conn.Read(p)
	if ferr := bc.bounds.feed(p[:n]); ferr != nil {
		bc.mu.Lock()
		bc.err = ferr
		bc.mu.Unlock()
		bc.Conn.Close()
		return n, nil
	}
	return n, err
}
