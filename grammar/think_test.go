package grammar

import (
	"strings"
	"testing"
)

// With Think, a <think>…</think> section is free text before the constraint
// applies, in every mode: the reasoning may say anything (even write a call),
// and the answer after it is held to the constraint as without Think.
func TestThinkSectionIsFreeTextBeforeTheConstraint(t *testing.T) {
	call := "<tool_call>\n{\"name\": \"gpio/write\", \"arguments\": {\"pin\": \"led\", \"level\": true}}\n</tool_call>"
	think := "<think>\nThe user wants the LED on. I could write <tool_call> with pin \"lamp\"... no, led. 100% sure? yes ✓\n</think>\n\n"
	for _, mode := range []Mode{ModeCalls, ModeAny, ModeText} {
		with := mustCompile(t, Spec{Form: FormQwen, Mode: mode, Tools: []ToolSpec{gpioWrite}, Think: true})
		without := mustCompile(t, Spec{Form: FormQwen, Mode: mode, Tools: []ToolSpec{gpioWrite}})
		answer := call
		if mode == ModeText {
			answer = "The LED is on."
		}
		if !accepts(with, think+answer) {
			t.Errorf("%s: think then a valid answer refused", mode)
		}
		if !accepts(with, answer) {
			t.Errorf("%s: the answer alone (no thinking) refused", mode)
		}
		if mode == ModeCalls && accepts(without, think+answer) {
			t.Errorf("%s: without Think, the think section passed", mode)
		}
		// After </think> the constraint holds: a wrong pin cannot follow.
		if mode != ModeText {
			bad := strings.Replace(call, `"led"`, `"lamp"`, 1)
			if alive(with, think+bad[:len(bad)-20]) {
				t.Errorf("%s: an invalid call after the think section is still alive", mode)
			}
		}
		// Only one think section, and it ends at the first </think>.
		if mode == ModeCalls && accepts(with, think+think+answer) {
			t.Errorf("%s: two think sections accepted", mode)
		}
	}
	out, err := ParseOutput(Spec{Form: FormQwen, Mode: ModeAny, Think: true}, think+call)
	if err != nil || len(out.Calls) != 1 || out.Calls[0].Name != "gpio/write" || out.Text != "" {
		t.Errorf("ParseOutput: %+v %v", out, err)
	}
}
