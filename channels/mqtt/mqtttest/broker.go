// Package mqtttest runs a real Mosquitto broker on 127.0.0.1 for tests, and
// plays Home Assistant with Mosquitto's own clients (mosquitto_sub and
// mosquitto_pub): an independent implementation of the protocol, so that a
// test cannot pass by clawedge agreeing with itself.
package mqtttest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Options choose the broker's listener.
type Options struct {
	TLS bool // mqtts with a CA made for the test
	// Username and Password, when set, are required of every client.
	Username, Password string
	// MaxPacketSize, when set, is mosquitto's max_packet_size: a client
	// that sends a larger packet is disconnected.
	MaxPacketSize int
}

// Broker is a running mosquitto.
type Broker struct {
	URL    string // mqtt://127.0.0.1:port or mqtts://127.0.0.1:port
	CAFile string // the test CA (TLS only)
	opts   Options
	dir    string
	conf   string
	port   int
	cmd    *exec.Cmd
	done   chan struct{}
	log    *os.File
	// subscribers numbers the Subscribers, for their client ids.
	subscribers int
}

// Need skips the test when mosquitto is not installed, unless
// CLAWEDGE_REQUIRE_MQTT is set (scripts/test.sh sets it, so CI fails instead).
func Need(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"mosquitto", "mosquitto_sub", "mosquitto_pub", "mosquitto_passwd"} {
		if _, err := lookPath(tool); err != nil {
			if os.Getenv("CLAWEDGE_REQUIRE_MQTT") != "" {
				t.Fatalf("%s is not installed (apt-get install mosquitto mosquitto-clients) and CLAWEDGE_REQUIRE_MQTT is set", tool)
			}
			t.Skipf("%s is not installed (apt-get install mosquitto mosquitto-clients)", tool)
		}
	}
}

// lookPath finds a tool in PATH or /usr/sbin, where Debian puts mosquitto
// (not in a normal user's PATH).
func lookPath(tool string) (string, error) {
	if p, err := exec.LookPath(tool); err == nil {
		return p, nil
	}
	return exec.LookPath(filepath.Join("/usr/sbin", tool))
}

// Start runs a broker with persistence (so that a restart keeps sessions and
// queued messages) and stops it when the test ends.
func Start(t testing.TB, opts Options) *Broker {
	t.Helper()
	Need(t)
	b := &Broker{opts: opts, dir: t.TempDir()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// queue_qos0_messages: a Subscriber's session is persistent, so what is
	// published while it reconnects (after a Restart) waits for it.
	conf := fmt.Sprintf("listener %d 127.0.0.1\npersistence true\npersistence_location %s/\nqueue_qos0_messages true\nlog_dest stderr\nlog_type error\nlog_type warning\n",
		b.port, b.dir)
	if u, err := user.Current(); err == nil && os.Geteuid() == 0 {
		// As root, mosquitto switches to the user "mosquitto", which cannot
		// read the test's private temp dir: stay who we are.
		conf += "user " + u.Username + "\n"
	}
	if opts.MaxPacketSize > 0 {
		conf += fmt.Sprintf("max_packet_size %d\n", opts.MaxPacketSize)
	}
	scheme := "mqtt"
	if opts.TLS {
		scheme = "mqtts"
		b.CAFile = writeCerts(t, b.dir)
		conf += fmt.Sprintf("cafile %s\ncertfile %s/server.pem\nkeyfile %s/server.key\n", b.CAFile, b.dir, b.dir)
	}
	if opts.Username != "" {
		pw := filepath.Join(b.dir, "passwd")
		tool, _ := lookPath("mosquitto_passwd")
		if out, err := exec.Command(tool, "-b", "-c", pw, opts.Username, opts.Password).CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_passwd: %v\n%s", err, out)
		}
		conf += "allow_anonymous false\npassword_file " + pw + "\n"
	} else {
		conf += "allow_anonymous true\n"
	}
	b.conf = filepath.Join(b.dir, "mosquitto.conf")
	if err := os.WriteFile(b.conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	b.URL = fmt.Sprintf("%s://127.0.0.1:%d", scheme, b.port)
	if b.log, err = os.Create(filepath.Join(b.dir, "mosquitto.log")); err != nil {
		t.Fatal(err)
	}
	b.start(t)
	t.Cleanup(b.Stop)
	return b
}

func (b *Broker) start(t testing.TB) {
	t.Helper()
	tool, _ := lookPath("mosquitto")
	b.cmd = exec.Command(tool, "-c", b.conf)
	b.cmd.Stdout, b.cmd.Stderr = b.log, b.log
	if err := b.cmd.Start(); err != nil {
		t.Fatalf("starting mosquitto: %v", err)
	}
	b.done = make(chan struct{})
	go func() { b.cmd.Wait(); close(b.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", b.port))
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-b.done:
			t.Fatalf("mosquitto exited: %s", b.Log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mosquitto does not listen on port %d: %s", b.port, b.Log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Stop stops the broker (SIGTERM: it saves its persistence file).
func (b *Broker) Stop() {
	if b.cmd == nil {
		return
	}
	stopWithin(b.cmd, b.done, func() { b.cmd.Process.Signal(os.Interrupt) })
	b.cmd = nil
}

// stopWithin asks a broker's process to stop and kills it if it has not
// within 5 s; done is closed when the process has exited.
func stopWithin(cmd *exec.Cmd, done <-chan struct{}, ask func()) {
	ask()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// Restart stops the broker and starts it again on the same port.
func (b *Broker) Restart(t testing.TB) {
	t.Helper()
	b.Stop()
	b.start(t)
}

// Log is what mosquitto wrote.
func (b *Broker) Log() string {
	out, _ := os.ReadFile(b.log.Name())
	return string(out)
}

// clientArgs are the connection arguments of mosquitto_sub and mosquitto_pub.
func (b *Broker) clientArgs() []string {
	args := []string{"-h", "127.0.0.1", "-p", fmt.Sprint(b.port), "-V", "mqttv311"}
	if b.CAFile != "" {
		args = append(args, "--cafile", b.CAFile)
	}
	if b.opts.Username != "" {
		args = append(args, "-u", b.opts.Username, "-P", b.opts.Password)
	}
	return args
}

// Publish sends one message with mosquitto_pub at QoS 1.
func (b *Broker) Publish(t testing.TB, topic, payload string, retain bool) {
	t.Helper()
	b.PublishQoS(t, topic, payload, 1, retain)
}

// PublishQoS sends one message with mosquitto_pub at qos (0, 1 or 2).
func (b *Broker) PublishQoS(t testing.TB, topic, payload string, qos int, retain bool) {
	t.Helper()
	tool, _ := lookPath("mosquitto_pub")
	args := append(b.clientArgs(), "-q", fmt.Sprint(qos), "-t", topic, "-m", payload)
	if retain {
		args = append(args, "-r")
	}
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub %s: %v\n%s", topic, err, out)
	}
}

// PublishFile sends the content of file as one message with mosquitto_pub
// at qos (a payload too large for a command-line argument).
func (b *Broker) PublishFile(t testing.TB, topic, file string, qos int) {
	t.Helper()
	tool, _ := lookPath("mosquitto_pub")
	args := append(b.clientArgs(), "-q", fmt.Sprint(qos), "-t", topic, "-f", file)
	if out, err := exec.Command(tool, args...).CombinedOutput(); err != nil {
		t.Fatalf("mosquitto_pub -f %s: %v\n%s", topic, err, out)
	}
}

// Message is one message a Subscriber received.
type Message struct {
	Topic    string
	Retained bool
	Payload  string
}

// Subscriber is a mosquitto_sub process collecting messages.
type Subscriber struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	cond *sync.Cond
	msgs []Message
	err  error
}

// Subscribe starts mosquitto_sub on topic (wildcards allowed) and returns once
// it is subscribed (it has received the broker's retained messages' first one,
// or a probe of its own).
func (b *Broker) Subscribe(t testing.TB, topic string) *Subscriber {
	t.Helper()
	tool, _ := lookPath("mosquitto_sub")
	// Topic, retained flag, payload; a tab cannot occur in the payloads tested.
	// A persistent session (-c with its own client id): after a Restart the
	// broker queues what the board republishes until mosquitto_sub is back,
	// which otherwise races the board's reconnect and could miss it.
	b.subscribers++
	id := fmt.Sprintf("mqtttest-sub-%d-%d", b.port, b.subscribers)
	args := append(b.clientArgs(), "-q", "1", "-c", "-i", id, "-t", topic, "-t", "mqtttest/probe", "-F", `%t\t%r\t%p`)
	return startSubscriber(t, exec.Command(tool, args...), func() { b.Publish(t, "mqtttest/probe", "probe", false) })
}

// startSubscriber runs cmd, a client that prints one "topic<TAB>retained<TAB>
// payload" line per message and is subscribed to mqtttest/probe as well, and
// returns once it is subscribed: once it sees a probe published by probe.
func startSubscriber(t testing.TB, cmd *exec.Cmd, probe func()) *Subscriber {
	t.Helper()
	s := &Subscriber{cmd: cmd}
	s.cond = sync.NewCond(&s.mu)
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	s.cmd.Stderr = &stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), "\t", 3)
			if len(parts) != 3 {
				continue
			}
			s.mu.Lock()
			s.msgs = append(s.msgs, Message{Topic: parts[0], Retained: parts[1] == "1", Payload: parts[2]})
			s.cond.Broadcast()
			s.mu.Unlock()
		}
		s.mu.Lock()
		s.err = fmt.Errorf("the subscriber ended: %s", stderr.String())
		s.cond.Broadcast()
		s.mu.Unlock()
	}()
	t.Cleanup(func() { s.cmd.Process.Kill(); s.cmd.Wait() })
	// Probe until the subscriber sees its own topic: then it is subscribed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		probe()
		if _, ok := s.Wait(200*time.Millisecond, func(m Message) bool { return m.Topic == "mqtttest/probe" }); ok {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the subscriber did not subscribe: %v", s.err)
		}
	}
}

// Wait returns the first message received so far, or within d, for which
// match is true.
func (s *Subscriber) Wait(d time.Duration, match func(Message) bool) (Message, bool) {
	return s.WaitAfter(0, d, match)
}

// WaitAfter is Wait among the messages after the first n (len(Messages())
// at some earlier point).
func (s *Subscriber) WaitAfter(n int, d time.Duration, match func(Message) bool) (Message, bool) {
	// The deadline is taken before the timer starts, so the timer's wake-up
	// comes at or after it: the other order let a waiter woken a moment
	// before its deadline wait again with nothing left to wake it (a test
	// hung until the 10-minute timeout).
	deadline := time.Now().Add(d)
	stop := time.AfterFunc(d, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer stop.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := n; ; {
		for ; i < len(s.msgs); i++ {
			if match(s.msgs[i]) {
				return s.msgs[i], true
			}
		}
		if s.err != nil || !time.Now().Before(deadline) {
			return Message{}, false
		}
		s.cond.Wait()
	}
}

// Messages returns every message received so far.
func (s *Subscriber) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Last returns the last message on topic, if any.
func (s *Subscriber) Last(topic string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.msgs) - 1; i >= 0; i-- {
		if s.msgs[i].Topic == topic {
			return s.msgs[i], true
		}
	}
	return Message{}, false
}

// writeCerts makes a CA and a server certificate for 127.0.0.1 signed by it,
// writes them with the key into dir, and returns the CA file.
func writeCerts(t testing.TB, dir string) string {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "clawedge test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srv := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srv, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("ca.pem", "CERTIFICATE", caDER)
	write("server.pem", "CERTIFICATE", srvDER)
	write("server.key", "EC PRIVATE KEY", keyDER)
	return filepath.Join(dir, "ca.pem")
}
