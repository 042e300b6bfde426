package memory_test

import (
	"fmt"
	"os"

	"github.com/clawedge/clawedge/memory"
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
	p := &memory.Prompt{W: w}
	fmt.Println(p.Recall("which evening do the bins go out", 100) != "")
	// Output:
	// 1 The garage relay must never stay on more than two seconds. -- person telegram:42
	// true
}
