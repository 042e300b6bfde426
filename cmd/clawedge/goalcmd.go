package main

// This file: `clawedge goal add|list|show|cancel|answer`. Adding, cancelling
// and answering are the goal/* tools, run like `clawedge exec` (through the
// daemon's control socket when it runs, which knows who asks), so the policy
// and the audit cover them; list and show read the goals.

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

func newGoalCmd(g *globalFlags) *cobra.Command {
	root := &cobra.Command{Use: "goal", Short: "Set, list, show and cancel goals the board pursues over time (docs/goals.md)"}
	var until, deadline string
	var steps, tokens, approvals, reads int
	add := &cobra.Command{
		Use:   "add OBJECTIVE",
		Short: "Set a goal: the model plans it, the board pursues it until it is reached, its deadline passes or its budget ends",
		Example: `  clawedge goal add 'keep the greenhouse between 18 and 24 C tonight' --deadline 10h
  clawedge goal add 'switch the led on' --until '@gpio/read{pin="led"} is high'
  clawedge goal add 'water the plants when the soil is dry' --deadline 168h --steps 20 --approvals 7`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := []grammar.Param{{Key: "objective", Value: grammar.StringValue(args[0])}}
			if until != "" {
				if _, err := tools.ParseReadCheck(until); err != nil {
					return fmt.Errorf("--until: %w", err)
				}
				params = append(params, grammar.Param{Key: "until", Value: grammar.StringValue(until)})
			}
			if deadline != "" {
				params = append(params, grammar.Param{Key: "deadline", Value: grammar.StringValue(deadline)})
			}
			for _, b := range []struct {
				key string
				n   int
			}{{"steps", steps}, {"tokens", tokens}, {"approvals", approvals}, {"reads", reads}} {
				if cmd.Flags().Changed(b.key) {
					params = append(params, grammar.Param{Key: b.key, Value: grammar.IntValue(int64(b.n))})
				}
			}
			return goalCommand(cmd, g, tools.CommandText("goal/add", params))
		},
	}
	add.Flags().StringVar(&until, "until", "", `the success check: a read and a condition, such as '@gpio/read{pin="led"} is high' (or above N, below N, between N and M)`)
	add.Flags().StringVar(&deadline, "deadline", "", "how long it may be pursued, such as 8h")
	add.Flags().IntVar(&steps, "steps", 0, "at most this many steps (default: goals.budget.steps)")
	add.Flags().IntVar(&tokens, "tokens", 0, "at most this many model tokens, planning and evaluating (default: goals.budget.tokens)")
	add.Flags().IntVar(&approvals, "approvals", 0, "at most this many approvals asked (default: goals.budget.approvals)")
	add.Flags().IntVar(&reads, "reads", 0, "at most this many reads of its checks (default: goals.budget.reads)")
	root.AddCommand(add)

	var asJSON bool
	list := &cobra.Command{
		Use: "list", Short: "List the goals: id, state, objective, steps done, owner", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			gs, err := goalRead(cmd.Context(), g, daemon.GoalRequest{Op: "list"})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd, gs)
			}
			fmt.Fprintln(cmd.OutOrStdout(), goals.FormatList(gs))
			return nil
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON: id, objective, owner, state, deadline, steps with their states")
	show := &cobra.Command{
		Use: "show ID", Short: "Show a goal: its plan with each step's state, its evaluations, the budget spent", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			gs, err := goalRead(cmd.Context(), g, daemon.GoalRequest{Op: "show", ID: args[0]})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd, gs[0])
			}
			fmt.Fprintln(cmd.OutOrStdout(), goals.Show(gs[0]))
			return nil
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	root.AddCommand(list, show,
		&cobra.Command{
			Use: "cancel ID", Short: "Cancel a goal and its sub-goals", Args: cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return goalCommand(cmd, g, tools.CommandText("goal/cancel", []grammar.Param{{Key: "id", Value: grammar.StringValue(args[0])}}))
			},
		},
		&cobra.Command{
			Use: "answer ID TEXT", Short: "Answer the question a goal asked", Args: cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				return goalCommand(cmd, g, tools.CommandText("goal/answer", []grammar.Param{
					{Key: "id", Value: grammar.StringValue(args[0])}, {Key: "text", Value: grammar.StringValue(args[1])}}))
			},
		})
	return root
}

func printJSON(cmd *cobra.Command, v any) error {
	enc := json.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// goalCommand runs a goal/* command line like exec: in the daemon when it
// runs, else here on the store (a goal added here is pursued by the next
// `clawedge run`).
func goalCommand(cmd *cobra.Command, g *globalFlags, line string) error {
	return runLine(cmd, g, line, false, func(a *daemon.Core) (func(), error) { return nil, a.ReadyGoals() })
}

// goalRead lists or shows goals: the daemon's, else the store's.
func goalRead(_ context.Context, g *globalFlags, req daemon.GoalRequest) ([]goals.Goal, error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, err
	}
	d, err := dialDaemon(cfg)
	if err != nil {
		return nil, err
	}
	if d != nil {
		defer d.Close()
		raw, err := d.Op("goal", req)
		if err != nil {
			return nil, err
		}
		var gs []goals.Goal
		return gs, json.Unmarshal(raw, &gs)
	}
	a, err := openCore(cfg, g)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	rt, err := a.Goals()
	if err != nil {
		return nil, err
	}
	return daemon.GoalDo(rt, req)
}
