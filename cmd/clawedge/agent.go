package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/localmodel"
)

// chatSystem is the system message of free-text chat until the agent loop
// (with tools) replaces this simple agent.
const chatSystem = "You are clawedge, an assistant running on a small single-board computer. " +
	"Answer briefly and plainly."

const (
	chatHistory   = 8   // messages kept per channel and user (4 exchanges)
	chatMaxTokens = 512 // per reply
)

// chatAgent answers free text with a model, keeping a short history per
// channel and user. It streams the reply when the channel can show it.
type chatAgent struct {
	p llm.Provider

	mu   sync.Mutex
	hist map[string][]llm.Message
}

func newChatAgent(p llm.Provider) *chatAgent {
	return &chatAgent{p: p, hist: map[string][]llm.Message{}}
}

func (a *chatAgent) Reply(ctx context.Context, msg channels.Message) (string, error) {
	return a.ReplyStream(ctx, msg, nil)
}

func (a *chatAgent) ReplyStream(ctx context.Context, msg channels.Message, emit func(string)) (string, error) {
	key := msg.Channel + "\x00" + msg.User
	a.mu.Lock()
	past := append([]llm.Message(nil), a.hist[key]...)
	a.mu.Unlock()
	turn := llm.Message{Role: llm.RoleUser, Content: msg.Text}
	msgs := append(append([]llm.Message{{Role: llm.RoleSystem, Content: chatSystem}}, past...), turn)
	s, err := a.p.Chat(ctx, llm.Request{Messages: msgs, MaxTokens: chatMaxTokens, NoThink: true})
	if err != nil {
		return "", err
	}
	defer s.Close()
	var b strings.Builder
	for {
		c, err := s.Next()
		if err != nil {
			return "", err
		}
		if c.Text != "" {
			// Leading whitespace is dropped, so the reply starts on the line.
			text := c.Text
			if b.Len() == 0 {
				text = strings.TrimLeft(text, " \t\r\n")
			}
			b.WriteString(text)
			if emit != nil && text != "" {
				emit(text)
			}
		}
		if c.Final != nil {
			break
		}
	}
	reply := strings.TrimRight(b.String(), " \t\r\n")
	a.mu.Lock()
	h := append(a.hist[key], turn, llm.Message{Role: llm.RoleAssistant, Content: reply})
	if len(h) > chatHistory {
		h = h[len(h)-chatHistory:]
	}
	a.hist[key] = h
	a.mu.Unlock()
	if reply == "" {
		return "(the model gave no answer)", nil
	}
	return reply, nil
}

// brokenAgent answers every message with why the model cannot be used, so a
// daemon with a bad models.local still runs commands.
type brokenAgent struct{ err error }

func (a brokenAgent) Reply(context.Context, channels.Message) (string, error) { return "", a.err }

// localClient makes the runner client of a models.local section.
func localClient(l *config.LocalModel, a *app) (*localmodel.Client, error) {
	return localmodel.New(localmodel.Options{
		Model: l.Path, Threads: l.Threads, Context: l.Context, Template: l.Template,
		IdleUnload: time.Duration(l.IdleUnload), Log: a.log,
	})
}

// dispatcher is the Dispatcher every channel of a shares: with models.local
// configured, free text goes to the local model.
func (a *app) dispatcher() *channels.Dispatcher {
	d := &channels.Dispatcher{Runner: a.runner}
	l := a.cfg.Models.Local
	if l == nil {
		return d
	}
	c, err := localClient(l, a)
	if err != nil {
		a.log.Error("models.local cannot be used; free text will get this error", "err", err)
		d.Agent = brokenAgent{fmt.Errorf("the local model cannot be used: %w", err)}
		return d
	}
	a.local = c
	d.Agent = newChatAgent(c)
	return d
}

var _ channels.StreamAgent = (*chatAgent)(nil)
