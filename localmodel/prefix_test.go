package localmodel

import (
	"testing"
	"time"

	"github.com/clawedge/clawedge/localmodel/chat"
)

// The saved state follows the conversation being had, and another one
// replaces it only after the replace interval: what a save is asked for.
func TestSavedPrefixFollowsTheConversation(t *testing.T) {
	const sys = "<|im_start|>system\ntools<|im_end|>\n"
	turn1 := sys + "<|im_start|>user\nled on<|im_end|>\n<|im_start|>assistant\nDone.<|im_end|>\n"
	turn2 := turn1 + "<|im_start|>user\nand off<|im_end|>\n<|im_start|>assistant\nOff.<|im_end|>\n"
	other := sys + "<|im_start|>user\nwho am I?<|im_end|>\n<|im_start|>assistant\nAnn.<|im_end|>\n"
	next := "<|im_start|>user\nnext<|im_end|>\n<|im_start|>assistant\n"
	layout := func(stable string) chat.Layout { return chat.Layout{System: len(sys), Session: len(stable)} }
	t0 := time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	p := savedPrefix{replace: 10 * time.Minute}
	ask := func(stable string, at time.Time) int { return p.fixed(stable+next, layout(stable), at) }

	if n := ask(sys, t0); n != len(sys) {
		t.Fatalf("nothing known saved: fixed %d, want the system turn's %d", n, len(sys))
	}
	p.saved(sys, t0)
	if n := ask(sys, t0.Add(time.Second)); n != len(sys) {
		t.Errorf("the same system turn: fixed %d, want %d (the runner sees it holds it)", n, len(sys))
	}
	for _, stable := range []string{turn1, turn2} {
		if n := ask(stable, t0.Add(2*time.Second)); n != len(stable) {
			t.Errorf("the conversation went on: fixed %d, want %d (its earlier turns saved)", n, len(stable))
		}
		p.saved(stable, t0.Add(2*time.Second))
	}
	if n := ask(other, t0.Add(time.Minute)); n != 0 {
		t.Errorf("another conversation a minute later: fixed %d, want 0 (no write: it shares the saved system turn)", n)
	}
	if n := ask(sys, t0.Add(time.Minute)); n != 0 {
		t.Errorf("a new conversation a minute later: fixed %d, want 0", n)
	}
	if n := ask(other, t0.Add(11*time.Minute)); n != len(other) {
		t.Errorf("another conversation after the replace interval: fixed %d, want %d", n, len(other))
	}
	// No system turn (a raw completion), or nothing after the stable part: nothing to save.
	if n := p.fixed("plain text", chat.Layout{}, t0); n != 0 {
		t.Errorf("no system turn: fixed %d", n)
	}
	if n := p.fixed(sys, chat.Layout{System: len(sys), Session: len(sys)}, t0.Add(time.Hour)); n != 0 {
		t.Errorf("a prompt that is all system turn: fixed %d", n)
	}
}
