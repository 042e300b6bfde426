package mqtt

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/clawedge/clawedge/channels/mqtt/mqtttest"
	"github.com/clawedge/clawedge/internal/metrics"
	"github.com/clawedge/clawedge/store"
)

// storeCommits is how many write transactions the stores of this process
// have committed (clawedge_store_commit_seconds_count): each is an fsync.
func storeCommits(t *testing.T) uint64 {
	t.Helper()
	var page bytes.Buffer
	metrics.WritePrometheus(&page, false)
	sc := bufio.NewScanner(&page)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "clawedge_store_commit_seconds_count "); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

// handled is how many commands the channels of this process have handled,
// whatever the outcome.
func handled() uint64 {
	n := uint64(0)
	for _, o := range []string{"ok", "error", "refused", "limited", "duplicate"} {
		n += commands(o).Get()
	}
	return n
}

// writeBytes is what this process has written to block devices so far
// (/proc/self/io write_bytes; 0 where it cannot be read).
func writeBytes() uint64 {
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for l := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "write_bytes: "); ok {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}

// flooder publishes on b as another client of the broker would.
func flooder(t *testing.T, b *mqtttest.Broker) paho.Client {
	t.Helper()
	po := paho.NewClientOptions().AddBroker("tcp://" + strings.TrimPrefix(b.URL, "mqtt://")).SetClientID("flooder")
	po.SetAutoReconnect(false)
	cl := paho.NewClient(po)
	if tk := cl.Connect(); !tk.WaitTimeout(10*time.Second) || tk.Error() != nil {
		t.Fatalf("the flooder cannot connect: %v", tk.Error())
	}
	t.Cleanup(func() { cl.Disconnect(100) })
	return cl
}

// publishAll publishes the messages at QoS 1 and waits for the broker's
// acknowledgements, then until handled of them were counted (in batches, so
// that the broker's queue for the board never overflows).
func publishAll(t *testing.T, cl paho.Client, msgs [][2]string, handled func() uint64) {
	t.Helper()
	const batch = 200
	for i := 0; i < len(msgs); i += batch {
		start := handled()
		end := min(i+batch, len(msgs))
		var tokens []paho.Token
		for _, m := range msgs[i:end] {
			tokens = append(tokens, cl.Publish(m[0], 1, false, m[1]))
		}
		for _, tk := range tokens {
			if !tk.WaitTimeout(30*time.Second) || tk.Error() != nil {
				t.Fatalf("publishing: %v", tk.Error())
			}
		}
		for deadline := time.Now().Add(2 * time.Minute); handled()-start < uint64(end-i); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d messages handled", handled()-start, end-i)
			}
		}
	}
}

// TestFloodOfBadSetsWritesNothing: 5,000 set messages for names nobody
// exposed and with bad payloads (a wrong word, 4 KiB of them) are refused
// without a single write to the store (each was stored before it was
// checked: a packet record and a queue item, then removed, three commits
// with their fsync each); a valid command after them still runs.
func TestFloodOfBadSetsWritesNothing(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	ha := b.Subscribe(t, "clawedge/#")
	dir := t.TempDir()
	st := openStore(t, dir)
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{})
	// Discovery's record is written before online is sent (connected).
	wait(t, ha, "online", is("clawedge/garage/status", "online"))
	wait(t, ha, "the initial state", is("clawedge/garage/relay/state", Off))
	cl := flooder(t, b)

	var msgs [][2]string
	for i := range 5000 {
		switch i % 4 {
		case 0, 1:
			msgs = append(msgs, [2]string{fmt.Sprintf("clawedge/garage/nobody-%d/set", i), On})
		case 2:
			msgs = append(msgs, [2]string{"clawedge/garage/relay/set", fmt.Sprintf("ONN%d", i)})
		case 3:
			msgs = append(msgs, [2]string{"clawedge/garage/relay/set", strings.Repeat(" ", 4096) + On})
		}
	}
	size := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, store.FileName))
		if err != nil {
			return -1
		}
		return fi.Size()
	}
	commits, bytes0, io0 := storeCommits(t), size(), writeBytes()
	publishAll(t, cl, msgs, handled)
	wrote := storeCommits(t) - commits
	t.Logf("5000 bad sets: %d store commits, store file %d -> %d bytes, %d bytes written to disk by the test process", wrote, bytes0, size(), writeBytes()-io0)
	if wrote > 0 {
		t.Errorf("5000 bad sets made %d store commits, want none", wrote)
	}
	if n := h.relay.count(); n != 0 {
		t.Errorf("the relay was written %d times", n)
	}
	// A good command after the flood runs.
	tk := cl.Publish("clawedge/garage/relay/set", 1, false, On)
	tk.WaitTimeout(10 * time.Second)
	wait(t, ha, "state ON", is("clawedge/garage/relay/state", On))
}

// TestCommandWritesRateLimited: valid commands faster than the write budget
// are dropped past it (acknowledged, counted as limited): of 100 sent at
// once, the first writeBurst run, and at most one more per writeEvery.
func TestCommandWritesRateLimited(t *testing.T) {
	b := mqtttest.Start(t, mqtttest.Options{})
	ha := b.Subscribe(t, "clawedge/#")
	st := openStore(t, t.TempDir())
	defer st.Close()
	h := start(t, b, st, newRelay(), Options{})
	wait(t, ha, "online", is("clawedge/garage/status", "online"))
	cl := flooder(t, b)
	var msgs [][2]string
	for i := range 100 {
		msgs = append(msgs, [2]string{"clawedge/garage/relay/set", []string{On, Off}[i%2]})
	}
	begin, commits, io0 := time.Now(), storeCommits(t), writeBytes()
	publishAll(t, cl, msgs, handled)
	// Each was counted once handled: a dropped one at once, a stored one
	// once it ran (after the relay's write).
	ran := h.relay.count()
	most := writeBurst + int(time.Since(begin)/writeEvery) + 1
	wrote, disk := storeCommits(t)-commits, writeBytes()-io0
	t.Logf("100 commands at once: %d ran (at most %d allowed) in %s; %d store commits (%.1f a command), %d bytes written to disk (%d a command)",
		ran, most, time.Since(begin).Round(time.Millisecond), wrote, float64(wrote)/float64(max(ran, 1)), disk, disk/uint64(max(ran, 1)))
	if ran < writeBurst || ran > most {
		t.Errorf("%d of 100 commands ran, want from %d to %d", ran, writeBurst, most)
	}
}
