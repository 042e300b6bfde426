// Command exit1 stands in for a broken clawedge in the update test: the
// slot it is in must roll back by itself.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "clawedge (broken on purpose by the update test): exiting at start")
	os.Exit(1)
}
