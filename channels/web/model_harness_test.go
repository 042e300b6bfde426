package web

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/agent"
	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/llm/openai"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/llm/remote"
)

// withModel puts the real agent loop behind the dash's chat, its model a
// scripted OpenAI-compatible server on loopback (openaitest): the wire
// format, streaming and tool calls of a real one, the replies a test pushes.
func (d *dash) withModel(t *testing.T) *openaitest.Server {
	t.Helper()
	srv := openaitest.New(t)
	p, err := openai.New(openai.Options{Options: remote.Options{Name: "scripted", BaseURL: srv.URL, Model: "scripted-1", RetryBase: 10 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	ag, err := agent.New(agent.Options{Provider: p, Runner: d.srv.Runner, Policy: d.auth.Policy, Approvals: d.auth.Approvals})
	if err != nil {
		t.Fatal(err)
	}
	d.srv.Chat = &channels.Dispatcher{Runner: d.srv.Runner, Approvals: d.auth, Agent: turnAgent{ag}}
	return srv
}

// turnAgent is the agent loop behind the channels' StreamAgent, as the
// daemon's composition root puts it (the message's Asker goes with it).
type turnAgent struct{ a *agent.Agent }

func (t turnAgent) Reply(ctx context.Context, msg channels.Message) (string, error) {
	return t.ReplyStream(ctx, msg, nil)
}

func (t turnAgent) ReplyStream(ctx context.Context, msg channels.Message, emit func(string)) (string, error) {
	out, err := t.a.Turn(ctx, agent.In{Channel: msg.Channel, User: msg.User, Text: msg.Text, Asker: msg.Asker, Emit: emit})
	if err == nil && out.State == agent.Error {
		err = channels.ErrTurnFailed
	}
	return out.Text, err
}

// chatEvents is a streamed chat answer being read.
type chatEvents struct {
	r      *bufio.Reader
	cancel context.CancelFunc
}

type chatEvent struct {
	name string
	data string // JSON
}

// chat posts text asking for events, as the page's script does.
func (b *browser) chat(t *testing.T, text string) *chatEvents {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	raw, _ := json.Marshal(map[string]string{"text": text})
	req, _ := http.NewRequestWithContext(ctx, "POST", b.d.http.URL+"/api/chat", strings.NewReader(string(raw)))
	req.AddCookie(&http.Cookie{Name: cookieName, Value: b.cookie})
	req.Header.Set(csrfHeader, b.csrf)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("chat: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return &chatEvents{r: bufio.NewReader(resp.Body), cancel: cancel}
}

// next is the next event, within 30 s.
func (c *chatEvents) next(t *testing.T) chatEvent {
	t.Helper()
	got := make(chan chatEvent, 1)
	fail := make(chan error, 1)
	go func() {
		var ev chatEvent
		for {
			line, err := c.r.ReadString('\n')
			if err != nil {
				fail <- err
				return
			}
			line = strings.TrimRight(line, "\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				ev.name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data = line[len("data: "):]
			case line == "" && ev.name != "":
				got <- ev
				return
			}
		}
	}()
	select {
	case ev := <-got:
		return ev
	case err := <-fail:
		t.Fatalf("chat events: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("no chat event in 30 s")
	}
	return chatEvent{}
}

// until reads events up to the first one named name, returning the text
// events' pieces read on the way.
func (c *chatEvents) until(t *testing.T, name string) (chatEvent, []string) {
	t.Helper()
	var pieces []string
	for {
		ev := c.next(t)
		if ev.name == name {
			return ev, pieces
		}
		if ev.name == "text" {
			var s string
			json.Unmarshal([]byte(ev.data), &s)
			pieces = append(pieces, s)
		}
	}
}
