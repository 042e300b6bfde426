package toolstest_test

import (
	"fmt"
	"testing"

	"github.com/clawedge/clawedge/tools/toolstest"
)

// The corpus is read once per test that needs it; every definition is a
// JSON object with at least a name.
func ExampleBFCLDefinitions() {
	defs := toolstest.BFCLDefinitions(&testing.T{})
	fmt.Println(len(defs) > 3000, string(defs[0][:1]))
	// Output: true {
}
