package memory_test

import (
	"fmt"
	"os"

	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/tools"
)

// A person's note saved, then found by a question in other words; the entry
// says who saved it and when, and is shown to a model as quoted data.
func Example() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)
	w, _ := memory.Open(dir, memory.Limits{})
	w.Save(memory.Entry{Text: "The garage relay must never stay on more than two seconds.", Source: memory.Person, User: "telegram:42", Channel: "telegram"})
	w.Save(memory.Entry{Text: "Bins go out on Tuesday evening.", Source: memory.Person, User: "console"})

	es, _ := w.Search("how long may the relays be switched on?", 5)
	for _, e := range es {
		fmt.Println(e.ID, e.Text, "--", e.Author())
	}
	// A turn is given the notes of the principal it is for: the bins are
	// console's, not telegram:42's.
	p := &memory.Prompt{W: w}
	console := tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Model}
	ann := tools.Caller{Channel: "telegram", User: "telegram:42", Actor: tools.Model}
	fmt.Println(p.Recall(console, "which evening do the bins go out", 100) != "")
	fmt.Println(p.Recall(ann, "which evening do the bins go out", 100) != "")
	// Output:
	// 1 The garage relay must never stay on more than two seconds. -- person telegram:42
	// true
	// false
}
