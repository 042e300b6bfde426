package main

// This file: `clawedge goal add|list|show|cancel|answer`. Adding, cancelling
// and answering are the goal/* tools, run like `clawedge exec` (through the
// daemon's control socket when it runs, which knows who asks), so the policy
// and the audit cover them; list and show read the goals.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

func newGoalCmd(g *globalFlags) *cobra.Command {
	root := &cobra.Command{Use: "goal", Short: "Set, list, show and cancel goals the board pursues over time (docs/goals.md)"}
	var until, hold, deadline, untilTime string
	var steps, tokens, approvals, reads int
	add := &cobra.Command{
		Use:   "add OBJECTIVE",
		Short: "Set a goal: the model plans it, the board pursues it until it is reached, its deadline passes or its budget ends",
		Long: `Set a goal: the model plans it, the board pursues it until it is reached, its deadline passes or its budget ends.

--until is a check reached once: the goal is done when it holds. A plan that is over
with the check not holding yet waits for the world (state waiting), judged at each
change of what the check reads, and at the deadline ends failed, saying what it read.
--hold is a check that must hold until the deadline ("keep the greenhouse between 18
and 24 until 07:00"): the goal acts whenever the reading leaves the band and ends with
the lowest and highest reads and the time outside the band. A deadline is --deadline
(how long) or --until-time (when: 07:00 is the next 07:00, in the config's timezone).`,
		Example: `  clawedge goal add 'keep the greenhouse between 18 and 24 C tonight' --deadline 10h
  clawedge goal add 'switch the led on' --until '@gpio/read{pin="led"} is high'
  clawedge goal add 'turn the led on and leave it on until the door opens' --until '@gpio/read{pin="door"} is high' --deadline 5m
  clawedge goal add 'keep the greenhouse warm' --hold '@sensor/read{name="greenhouse";quantity="temperature"} between 18 and 24' --until-time 07:00
  clawedge goal add 'water the plants when the soil is dry' --deadline 168h --steps 20 --approvals 7`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := []grammar.Param{{Key: "objective", Value: grammar.StringValue(args[0])}}
			switch {
			case until != "" && hold != "":
				return errors.New("--until and --hold: a goal has one check, reached once (--until) or held until its deadline (--hold)")
			case deadline != "" && untilTime != "":
				return errors.New("--deadline and --until-time: a goal has one deadline, how long (--deadline) or when (--until-time)")
			case hold != "" && deadline == "" && untilTime == "":
				return errors.New("--hold needs a deadline to hold until: --deadline (such as 8h) or --until-time (such as 07:00)")
			}
			for _, c := range []struct{ flag, key, check string }{{"--until", "until", until}, {"--hold", "hold", hold}} {
				if c.check == "" {
					continue
				}
				if _, err := tools.ParseReadCheck(c.check); err != nil {
					return fmt.Errorf("%s: %w", c.flag, err)
				}
				params = append(params, grammar.Param{Key: c.key, Value: grammar.StringValue(c.check)})
			}
			if deadline != "" {
				params = append(params, grammar.Param{Key: "deadline", Value: grammar.StringValue(deadline)})
			}
			if untilTime != "" {
				// Checked here in the config's timezone, as the daemon
				// reads it; the daemon makes it a time when it sets the goal.
				loc := time.Local
				if cfg, err := loadConfigFile(g, withPlaceholders); err == nil {
					if l, err := config.LoadTimezone(cfg.Timezone); err == nil {
						loc = l
					}
				}
				if _, err := goals.ParseUntilTime(untilTime, time.Now(), loc); err != nil {
					return fmt.Errorf("--until-time: %w", err)
				}
				params = append(params, grammar.Param{Key: "until_time", Value: grammar.StringValue(untilTime)})
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
	add.Flags().StringVar(&hold, "hold", "", `a check that must hold from now until the deadline, such as '@sensor/read{name="greenhouse"} between 18 and 24' (instead of --until)`)
	add.Flags().StringVar(&deadline, "deadline", "", "how long it may be pursued, such as 8h")
	add.Flags().StringVar(&untilTime, "until-time", "", "when it ends, as a time: 07:00 (the next one, in the config's timezone), '2026-06-01 07:00' or RFC 3339 (instead of --deadline)")
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
