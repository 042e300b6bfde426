package channels

import "testing"

func TestGoalCommand(t *testing.T) {
	for _, tc := range []struct{ word, rest, want string }{
		{"/goal", `water the plants when the soil is dry; say "done"`, `@goal/add{objective="water the plants when the soil is dry; say \"done\""}`},
		{"/goal", "", `@goal/list{}`},
		{"/goals", "", `@goal/list{}`},
		{"/goal", "list", `@goal/list{}`},
		{"/goal", "show 3", `@goal/show{id="3"}`},
		{"/goal", "cancel 3.2", `@goal/cancel{id="3.2"}`},
		{"/goal", "answer 3 yes, water them", `@goal/answer{id="3";text="yes, water them"}`},
		{"/goal", "show the plants some love", `@goal/add{objective="show the plants some love"}`},
	} {
		if got := goalCommand(tc.word, tc.rest); got != tc.want {
			t.Errorf("goalCommand(%q, %q) = %s, want %s", tc.word, tc.rest, got, tc.want)
		}
	}
}
