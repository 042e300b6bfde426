package daemon

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/update"
)

// "update URL" typed by a person is sys/update on the call path: the
// authorizer lets a person at the board or an owner have it (a stranger and
// a model are refused, and the refusal audited), the intent is audited
// before clawedge-init gets one request line.
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
	u := &updateTool{init: &notifier{addr: &net.UnixAddr{Name: sock, Net: "unixgram"}}}
	slots := &slotsTool{}
	reg := tools.NewRegistry()
	if err := reg.Register(u, slots); err != nil {
		t.Fatal(err)
	}
	auth := &policy.Authorizer{Policy: &policy.Policy{Default: policy.Allow, Owners: []string{"telegram:42"}}}
	r := &tools.Runner{Registry: reg, Audit: st, Authorizer: auth}
	d := &channels.Dispatcher{Runner: r}
	ctx := context.Background()
	const url = "https://example.org/clawedge-v2.update"

	resp := d.Respond(ctx, channels.Message{Channel: "telegram", User: "telegram:7 (someone)", Text: "update " + url})
	if !resp.Failed || !strings.Contains(resp.Text, "only a person at the board or an owner") {
		t.Fatalf("a non-owner: %+v", resp)
	}
	call, err := r.Prepare("sys/update", []byte(`{"url":"`+url+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	if rep := r.Call(ctx, tools.Caller{Channel: "telegram", User: "telegram:42", Actor: tools.Model}, call); rep.Err == nil || !strings.Contains(rep.Err.Error(), "never a model") {
		t.Fatalf("the model for an owner: %v", rep.Err)
	}
	for _, m := range []channels.Message{
		{Channel: "telegram", User: "telegram:42 (owner)", Text: "update " + url},
		{Channel: "console/ttyS0", User: "console", Text: "UPDATE " + url},
	} {
		resp := d.Respond(ctx, m)
		if resp.Failed || !strings.Contains(resp.Text, "Update requested") {
			t.Fatalf("%s: %+v", m.User, resp)
		}
		buf := make([]byte, 512)
		n, _, err := init.ReadFromUnix(buf)
		if err != nil || string(buf[:n]) != update.RequestKey+url {
			t.Fatalf("init got %q %v", buf[:n], err)
		}
	}
	tail, err := st.Tail(10)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range tail {
		lines = append(lines, e.Who+" "+e.Command+" "+e.Detail)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"telegram:7 (someone) @sys/update{url=\"" + url + "\"} refused", "telegram:42 @sys/update", "never a model", "telegram:42 (owner) @sys/update", "console @sys/update"} {
		if !strings.Contains(got, want) {
			t.Errorf("the audit lacks %q:\n%s", want, got)
		}
	}
	// Not under clawedge-init (systemd, a shell): said plainly.
	u.init = nil
	if resp := d.Respond(ctx, channels.Message{Channel: "console/stdin", User: "console", Text: "update " + url}); !resp.Failed || !strings.Contains(resp.Text, "need the SD image") {
		t.Fatalf("without init: %+v", resp)
	}
	// "update status": the slots, as the update commands read them; a read
	// anyone may make.
	slots.status = func() (string, error) { return "slot A  dev  running, default", nil }
	if resp := d.Respond(ctx, channels.Message{Channel: "telegram", User: "telegram:7", Text: "update Status"}); resp.Failed || !strings.Contains(resp.Text, "slot A  dev") {
		t.Fatalf("update status: %+v", resp)
	}
	slots.status = nil
	if resp := d.Respond(ctx, channels.Message{Channel: "console/stdin", User: "console", Text: "update status"}); !strings.Contains(resp.Text, "no A/B slots") {
		t.Fatalf("update status off the image: %+v", resp)
	}
	// Not a URL: text for the agent (here none is configured).
	for _, text := range []string{"update", "update me on the door", "update ftp://x"} {
		if resp := d.Respond(ctx, channels.Message{Channel: "console/stdin", User: "console", Text: text}); resp.Text != channels.NoModelReply {
			t.Fatalf("%q: %+v", text, resp)
		}
	}
}
