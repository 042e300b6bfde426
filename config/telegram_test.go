package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestTelegramGroupsAndNotify(t *testing.T) {
	c := mustParse(t, `
telegram:
  allow_users: [42, 43]
  allow_chats: [-1001234567890, -5]
  notify:
    - {pin: button, edge: falling, users: [42], text: button pressed}
    - pin: button
`)
	want := []Notify{{Pin: "button", Edge: "falling", Users: []int64{42}, Text: "button pressed"}, {Pin: "button"}}
	if !reflect.DeepEqual(c.Telegram.Notify, want) {
		t.Errorf("notify = %+v, want %+v", c.Telegram.Notify, want)
	}
	if !reflect.DeepEqual(c.Telegram.AllowChats, []int64{-1001234567890, -5}) {
		t.Errorf("allow_chats = %v", c.Telegram.AllowChats)
	}
	// Round trip through the redacted form.
	out, _ := c.Redacted()
	c2 := mustParse(t, string(out))
	c2.Source = c.Source
	if !reflect.DeepEqual(c.Telegram, c2.Telegram) {
		t.Errorf("round trip: %+v != %+v\n%s", c.Telegram, c2.Telegram, out)
	}
}

func TestTelegramProblems(t *testing.T) {
	pins := `board:
  pins:
    button: {gpio: 27, mode: in, pull: up, edge: both}
    door: {gpio: 5, mode: in, edge: rising}
    quiet: {gpio: 6, mode: in}
    led: {gpio: 17, mode: out}
`
	for _, tc := range []struct{ src, at, msg string }{
		{"telegram:\n  allow_chats: [42]\n", "42", "42 is not a group chat id (group ids are negative numbers"},
		{"telegram:\n  allow_chats: [0]\n", "0]", "0 is not a group chat id"},
		{"telegram:\n  allow_chats: [x]\n", "x]", "expected an integer"},
		{"telegram:\n  allow_chats: -5\n", "-5", "expected a list"},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: nope}\n", "nope", `"nope" is not a configured pin (pins: button, door, led, quiet)`},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: led}\n", "led}", `pin "led" is an output`},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: quiet}\n", "quiet}", `pin "quiet" has no edge detection`},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: door, edge: falling}\n", "falling", `pin "door" detects rising edges only`},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: button, edge: down}\n", "down", "must be rising, falling or both"},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: button, users: [2]}\n", "2]", "user 2 is not in telegram.allow_users"},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: button, users: [-2]}\n", "-2", "-2 is not a Telegram user id"},
		{pins + "telegram:\n  notify:\n    - {pin: button}\n", "{pin", "nobody to notify"},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {edge: both}\n", "{edge", "pin is required"},
		{pins + "telegram:\n  allow_users: [1]\n  notify:\n    - {pin: button, colour: red}\n", "colour", `unknown key "colour" in telegram.notify[0] (valid: pin, edge, users, text)`},
	} {
		problemAt(t, tc.src, tc.at, tc.msg)
	}
}

func TestExampleDocumentsNotifyKeys(t *testing.T) {
	data := string(readTestdata(t, "example.yaml"))
	for _, k := range notifyKeys {
		if !strings.Contains(data, k+":") {
			t.Errorf("example.yaml does not document notify key %q", k)
		}
	}
}
