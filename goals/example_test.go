package goals_test

import (
	"fmt"

	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
)

// A plan is the command language: steps chained with "->", parallel ones in
// [ ]; the model writes it under the constraint pt.Constraint() compiles to,
// and ParsePlan checks it again, whoever wrote it.
func ExampleParsePlan() {
	pin := grammar.ArgSpec{Name: "pin", Type: grammar.TypeString, Required: true, Enum: []string{"pump", "soil"}}
	pt := goals.NewPlanTools([]grammar.ToolSpec{
		{Name: "gpio/write", Params: []grammar.ArgSpec{pin, {Name: "value", Type: grammar.TypeInteger, Required: true}}},
		{Name: "gpio/read", Params: []grammar.ArgSpec{pin}},
	}, func(name string) bool { return name == "gpio/read" })

	steps, err := goals.ParsePlan(`@gpio/write{pin="pump";value=1} -> `+
		`@goal/until{read='@gpio/read{pin="soil"}';cond="is_high";value=0;seconds=600} -> `+
		`@gpio/write{pin="pump";value=0}`, pt, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range steps {
		fmt.Println(s.ID, s.Kind, s.After, s.Command)
	}

	_, err = goals.ParsePlan(`@sys/exec{cmd="reboot"}`, pt, 1)
	fmt.Println(err)
	// Output:
	// 1 call [] @gpio/write{pin="pump";value=1}
	// 2 wait [1] @goal/until{read="@gpio/read{pin=\"soil\"}";cond="is_high";value=0;seconds=600}
	// 3 call [2] @gpio/write{pin="pump";value=0}
	// the plan's step 1 (line 1, column 1): sys/exec is not a tool this goal may use
}
