package mqttc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MQTT 3.1.1 control packet types (the high nibble of the first byte).
const (
	typeConnect     = 1
	typeConnack     = 2
	typePublish     = 3
	typePuback      = 4
	typeSubscribe   = 8
	typeSuback      = 9
	typeUnsuback    = 11
	typePingreq     = 12
	typePingresp    = 13
	typeDisconnect  = 14
	maxRemainingLen = 268435455
)

// MaxPacket bounds a packet read from the broker: a board does not take a
// 256 MB message into memory because a broker sent one.
const MaxPacket = 1 << 20

// packet is a packet read from the broker. Only what this client uses of
// each type is kept.
type packet struct {
	typ     byte
	flags   byte   // the low nibble: PUBLISH's dup, qos, retain
	id      uint16 // PUBLISH (QoS > 0), PUBACK, SUBACK, UNSUBACK
	code    byte   // CONNACK's return code; SUBACK's first granted QoS
	topic   string // PUBLISH
	payload []byte // PUBLISH
}

func (p *packet) qos() byte { return p.flags >> 1 & 3 }

// readPacket reads one packet from the broker and checks it against the
// specification; an error says what is wrong with it.
func readPacket(r *bufio.Reader) (*packet, error) {
	h, err := r.ReadByte()
	if err != nil {
		return nil, err
	}
	n, err := readRemaining(r)
	if err != nil {
		return nil, err
	}
	if n > MaxPacket {
		return nil, fmt.Errorf("mqtt: a packet of %d bytes from the broker (the limit is %d)", n, MaxPacket)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	p := &packet{typ: h >> 4, flags: h & 0xf}
	return p, p.decode(body)
}

// readRemaining reads the variable-length remaining length.
func readRemaining(r io.ByteReader) (int, error) {
	n, mult := 0, 1
	for i := 0; i < 4; i++ {
		b, err := r.ReadByte()
		if err != nil {
			return 0, err
		}
		n += int(b&0x7f) * mult
		if b&0x80 == 0 {
			return n, nil
		}
		mult *= 128
	}
	return 0, errors.New("mqtt: a remaining length longer than 4 bytes")
}

func (p *packet) decode(b []byte) error {
	want := func(flags byte, size int) error {
		if p.flags != flags {
			return fmt.Errorf("mqtt: packet type %d with flags %#x, want %#x", p.typ, p.flags, flags)
		}
		if size >= 0 && len(b) != size {
			return fmt.Errorf("mqtt: packet type %d of %d bytes, want %d", p.typ, len(b), size)
		}
		return nil
	}
	switch p.typ {
	case typeConnack:
		if err := want(0, 2); err != nil {
			return err
		}
		p.code = b[1]
	case typePuback, typeUnsuback:
		if err := want(0, 2); err != nil {
			return err
		}
		p.id = binary.BigEndian.Uint16(b)
	case typeSuback:
		if err := want(0, -1); err != nil {
			return err
		}
		if len(b) < 3 {
			return fmt.Errorf("mqtt: SUBACK of %d bytes", len(b))
		}
		p.id, p.code = binary.BigEndian.Uint16(b), b[2]
	case typePingresp:
		return want(0, 0)
	case typePublish:
		if p.qos() > 1 {
			// This client subscribes with QoS 0 and 1 only.
			return fmt.Errorf("mqtt: PUBLISH with QoS %d", p.qos())
		}
		if len(b) < 2 {
			return errors.New("mqtt: PUBLISH without a topic")
		}
		tl := int(binary.BigEndian.Uint16(b))
		b = b[2:]
		if tl > len(b) {
			return fmt.Errorf("mqtt: PUBLISH topic of %d bytes in %d", tl, len(b))
		}
		p.topic, b = string(b[:tl]), b[tl:]
		if p.topic == "" || !utf8.ValidString(p.topic) {
			return fmt.Errorf("mqtt: PUBLISH topic %q: empty or not UTF-8", p.topic)
		}
		if p.qos() > 0 {
			if len(b) < 2 {
				return errors.New("mqtt: PUBLISH without a packet id")
			}
			p.id, b = binary.BigEndian.Uint16(b), b[2:]
			if p.id == 0 {
				return errors.New("mqtt: PUBLISH with packet id 0")
			}
		}
		p.payload = b
	default:
		return fmt.Errorf("mqtt: unexpected packet type %d from the broker", p.typ)
	}
	return nil
}

// The encoders: each returns a whole packet, written in one Write.

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

// frame prefixes body with the fixed header.
func frame(header byte, body []byte) []byte {
	b := []byte{header}
	n := len(body)
	for {
		d := byte(n % 128)
		n /= 128
		if n > 0 {
			d |= 0x80
		}
		b = append(b, d)
		if n == 0 {
			break
		}
	}
	return append(b, body...)
}

func connectPacket(o *Options) []byte {
	flags := byte(0)
	if o.CleanSession {
		flags |= 0x02
	}
	if o.Will != nil {
		flags |= 0x04 | o.Will.QoS<<3
		if o.Will.Retain {
			flags |= 0x20
		}
	}
	if o.Username != "" {
		flags |= 0x80
		if o.Password != "" {
			flags |= 0x40
		}
	}
	b := appendString(nil, "MQTT")
	b = append(b, 4, flags) // protocol level 4: 3.1.1
	b = binary.BigEndian.AppendUint16(b, uint16(o.KeepAlive.Seconds()))
	b = appendString(b, o.ClientID)
	if o.Will != nil {
		b = appendString(b, o.Will.Topic)
		b = appendString(b, o.Will.Payload)
	}
	if o.Username != "" {
		b = appendString(b, o.Username)
		if o.Password != "" {
			b = appendString(b, o.Password)
		}
	}
	return frame(typeConnect<<4, b)
}

func publishPacket(topic string, qos byte, retain bool, id uint16, payload string) []byte {
	h := byte(typePublish<<4) | qos<<1
	if retain {
		h |= 1
	}
	b := appendString(nil, topic)
	if qos > 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	return frame(h, append(b, payload...))
}

func pubackPacket(id uint16) []byte {
	return frame(typePuback<<4, binary.BigEndian.AppendUint16(nil, id))
}

func subscribePacket(id uint16, filter string, qos byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = appendString(b, filter)
	return frame(typeSubscribe<<4|2, append(b, qos))
}

var (
	pingreqPacket    = []byte{typePingreq << 4, 0}
	disconnectPacket = []byte{typeDisconnect << 4, 0}
)

// connackErrors are CONNACK's refusals, by return code.
var connackErrors = [...]string{
	1: "unacceptable protocol version",
	2: "client identifier rejected",
	3: "server unavailable",
	4: "bad user name or password",
	5: "not authorized",
}

// ErrLoginRefused is in the error of a connection refused for its user
// name, password or authorization (return codes 4 and 5).
var ErrLoginRefused = errors.New("the broker refused the login")

func connackError(code byte) error {
	if code == 4 || code == 5 {
		return fmt.Errorf("%w: %s", ErrLoginRefused, connackErrors[code])
	}
	if int(code) < len(connackErrors) && connackErrors[code] != "" {
		return fmt.Errorf("the broker refused the connection: %s", connackErrors[code])
	}
	return fmt.Errorf("the broker refused the connection: return code %d", code)
}
