package main

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/update"
)

// "update URL" typed by a person reaches clawedge-init's socket as one
// request line, audited first; only a console or an owner may ask.
func TestUpdateWordReachesInit(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "notify")
	init, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer init.Close()
	st, err := store.Open(filepath.Join(dir, "data"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u := &updateRequester{owners: []string{"telegram:42"}, store: st, init: &notifier{addr: &net.UnixAddr{Name: sock, Net: "unixgram"}}}
	d := &channels.Dispatcher{Update: u}
	ctx := context.Background()
	const url = "https://example.org/clawedge-v2.update"

	r := d.Respond(ctx, channels.Message{Channel: "telegram", User: "telegram:7 (someone)", Text: "update " + url})
	if !r.Failed || !strings.Contains(r.Text, "only an owner") {
		t.Fatalf("a non-owner: %+v", r)
	}
	for _, m := range []channels.Message{
		{Channel: "telegram", User: "telegram:42 (owner)", Text: "update " + url},
		{Channel: "console/ttyS0", User: "console", Text: "UPDATE " + url},
	} {
		r := d.Respond(ctx, m)
		if r.Failed || !strings.Contains(r.Text, "Update requested") {
			t.Fatalf("%s: %+v", m.User, r)
		}
		buf := make([]byte, 512)
		n, _, err := init.ReadFromUnix(buf)
		if err != nil || string(buf[:n]) != update.RequestKey+url {
			t.Fatalf("init got %q %v", buf[:n], err)
		}
	}
	tail, err := st.Tail(5)
	if err != nil || len(tail) != 2 || tail[0].Command != "update "+url || !tail[0].OK || tail[0].Who != "telegram:42 (owner)" {
		t.Fatalf("audit %+v %v", tail, err)
	}
	// Not under clawedge-init (systemd, a shell): said plainly.
	u.init = nil
	if r := d.Respond(ctx, channels.Message{Channel: "console/stdin", User: "console", Text: "update " + url}); !r.Failed || !strings.Contains(r.Text, "need the SD image") {
		t.Fatalf("without init: %+v", r)
	}
	// "update status": the slots, read from the boot partition.
	b := newUpdateBoard(t)
	fl := defaultUpdateFlags()
	fl.boot, fl.slotA, fl.slotB, fl.cmdline = filepath.Join(b.dir, "boot"), filepath.Join(b.dir, "slot-a.img"), filepath.Join(b.dir, "slot-b.img"), filepath.Join(b.dir, "cmdline")
	u.flags = &fl
	r = d.Respond(ctx, channels.Message{Channel: "telegram", User: "telegram:7", Text: "update Status"})
	if r.Failed || !strings.Contains(r.Text, "slot A  dev") || !strings.Contains(r.Text, "running, default") || !strings.Contains(r.Text, "last attempt: none") {
		t.Fatalf("update status: %+v", r)
	}
	fl.cmdline = filepath.Join(b.dir, "boot/config.txt") // names no slot
	if r := d.Respond(ctx, channels.Message{Channel: "console/stdin", User: "console", Text: "update status"}); !strings.Contains(r.Text, "no A/B slots") {
		t.Fatalf("update status off the image: %+v", r)
	}
	// Not a URL: text for the agent (here none is configured).
	for _, text := range []string{"update", "update me on the door", "update ftp://x"} {
		if r := d.Respond(ctx, channels.Message{Channel: "console/stdin", User: "console", Text: text}); r.Text != channels.NoModelReply {
			t.Fatalf("%q: %+v", text, r)
		}
	}
}
