package mqttc

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// conn is one established connection.
type conn struct {
	nc net.Conn
	r  *bufio.Reader
	c  *Client

	wmu sync.Mutex // one packet at a time on the wire

	mu       sync.Mutex
	inflight map[uint16]*Token // awaiting PUBACK or SUBACK
	next     uint16
	err      error // set when closed
	pinged   bool  // a PINGREQ awaits its PINGRESP
}

func (cn *conn) write(b []byte) error {
	cn.wmu.Lock()
	defer cn.wmu.Unlock()
	cn.nc.SetWriteDeadline(time.Now().Add(cn.c.o.KeepAlive))
	_, err := cn.nc.Write(b)
	return err
}

// track allocates a packet id for a token.
func (cn *conn) track(suback bool) (*Token, uint16, error) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.err != nil {
		return nil, 0, cn.err
	}
	if len(cn.inflight) >= 0xffff {
		return nil, 0, errors.New("mqtt: 65535 messages await their acknowledgement")
	}
	for cn.next == 0 || cn.inflight[cn.next] != nil {
		cn.next++
	}
	id := cn.next
	cn.next++
	t := newToken()
	t.suback = suback
	cn.inflight[id] = t
	return t, id, nil
}

// untrack completes the token of id with err.
func (cn *conn) untrack(id uint16, err error) {
	cn.mu.Lock()
	t := cn.inflight[id]
	delete(cn.inflight, id)
	cn.mu.Unlock()
	if t != nil {
		t.finish(err)
	}
}

// close ends the connection and fails what awaited an acknowledgement.
func (cn *conn) close(err error) {
	cn.mu.Lock()
	if cn.err != nil {
		cn.mu.Unlock()
		return
	}
	cn.err = err
	waiting := cn.inflight
	cn.inflight = nil
	cn.mu.Unlock()
	cn.nc.Close()
	for _, t := range waiting {
		t.finish(fmt.Errorf("connection lost before the broker's acknowledgement: %w", err))
	}
}

// serve reads the broker's packets until the connection ends, and pings it
// at the keepalive interval.
func (c *Client) serve(cn *conn) error {
	stop := make(chan struct{})
	defer close(stop)
	go cn.ping(stop)
	var err error
	for err == nil {
		var p *packet
		if p, err = readPacket(cn.r); err == nil {
			err = cn.handle(p)
		}
	}
	cn.close(err)
	c.mu.Lock()
	if c.cur == cn {
		c.cur = nil
	}
	c.mu.Unlock()
	return err
}

func (cn *conn) handle(p *packet) error {
	switch p.typ {
	case typePublish:
		cn.c.route(&Message{topic: p.topic, payload: p.payload, qos: p.qos(), dup: p.flags&8 != 0, id: p.id, c: cn.c, conn: cn})
	case typePuback, typeSuback, typeUnsuback:
		cn.mu.Lock()
		t := cn.inflight[p.id]
		delete(cn.inflight, p.id)
		cn.mu.Unlock()
		if t == nil {
			return nil // late: its waiter gave up with the old connection
		}
		if t.suback != (p.typ == typeSuback) {
			t.finish(fmt.Errorf("mqtt: packet type %d answers packet %d", p.typ, p.id))
			return nil
		}
		var err error
		if p.typ == typeSuback && p.code == 0x80 {
			err = errors.New("the broker refused the subscription")
		}
		t.finish(err)
	case typePingresp:
		cn.mu.Lock()
		cn.pinged = false
		cn.mu.Unlock()
	case typeConnack:
		return errors.New("mqtt: a second CONNACK from the broker")
	}
	return nil
}

// ping sends PINGREQ every keepalive interval; a PINGREQ still unanswered
// at the next one ends the connection.
func (cn *conn) ping(stop chan struct{}) {
	t := time.NewTicker(cn.c.o.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		cn.mu.Lock()
		late := cn.pinged
		cn.pinged = true
		cn.mu.Unlock()
		if late {
			cn.close(fmt.Errorf("no answer from the broker in %s", cn.c.o.KeepAlive))
			return
		}
		if err := cn.write(pingreqPacket); err != nil {
			cn.close(err)
			return
		}
	}
}
