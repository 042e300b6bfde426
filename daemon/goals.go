package daemon

// This file: the goal runtime in the daemon (docs/goals.md): built over the
// same runner, store, policy and models as everything else; its owners told
// on the consoles and Telegram; `goal list|show` through the control socket.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/channels/telegram"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/tools"
)

// newGoals builds the goal runtime of a (not yet running).
func (a *Core) newGoals() (*goals.Runtime, error) {
	opt := goals.Options{
		Store: a.store, Runner: a.runner, Log: a.log,
		Offered: a.policy().Offered,
		Notify:  a.goalNotify,
	}
	if a.router != nil {
		opt.Model = a.router
	}
	// Judgements and the escalation of a stalled goal go to a remote model
	// when one is configured: the board's own model wrote the plan.
	if a.remote != nil {
		opt.Judge, opt.Escalation = a.remote, a.remote
	}
	s := a.cfg.Goals
	opt.Poll, opt.EvaluateEvery, opt.StallTime = time.Duration(s.Poll), time.Duration(s.EvaluateEvery), time.Duration(s.StallTime)
	opt.StallAfter, opt.MaxPlans = s.StallAfter, s.MaxPlans
	opt.Budget = goals.Budget{Tokens: s.Budget.Tokens, Steps: s.Budget.Steps, Wall: time.Duration(s.Budget.Wall), Approvals: s.Budget.Approvals, Reads: s.Budget.Reads}
	opt.MaxDepth, opt.MaxAlivePerOwner, opt.MaxAlive = s.MaxDepth, s.MaxAlivePerOwner, s.MaxAlive
	// A deadline given as a time of day (until_time: 07:00) is read where
	// automations' times are: the config's timezone.
	loc, err := config.LoadTimezone(a.cfg.Timezone)
	if err != nil {
		return nil, fmt.Errorf("timezone: %w", err)
	}
	opt.Location = loc
	// A goal waiting on a pin with edge detection (or a sampled sensor:
	// sensors.go) is judged at each change of it (goals_feed.go), not polled.
	if a.feed != nil {
		if err := a.providePins(); err != nil {
			return nil, err
		}
		opt.Watch = a.feed
	}
	rt, err := goals.New(opt)
	if err != nil {
		return nil, err
	}
	a.goalTools.Set(rt)
	return rt, nil
}

// goalNotify tells a goal's owner what became of it (people.Principal).
func (a *Core) goalNotify(ctx context.Context, owner tools.Principal, text string) {
	a.tell.Principal(ctx, owner, text)
}

// telegramChat is the chat of a Telegram principal ("telegram:42 (@ann)").
func telegramChat(p tools.Principal) (int64, bool) {
	id, ok := strings.CutPrefix(tools.UserID(p.User), telegram.ChannelName+":")
	if p.Channel != telegram.ChannelName || !ok {
		return 0, false
	}
	chat, err := strconv.ParseInt(id, 10, 64)
	return chat, err == nil
}

// serveGoals pursues the goals until ctx ends.
func (a *Core) serveGoals(ctx context.Context, wg *sync.WaitGroup) error {
	rt, err := a.newGoals()
	if err != nil {
		return fmt.Errorf("goals: %w", err)
	}
	a.goals = rt
	if pins := a.watchedPins(); len(pins) > 0 && a.feed != nil {
		wg.Go(func() { a.feedPins(ctx, pins) })
	}
	wg.Go(func() { rt.Run(ctx) })
	return nil
}

// GoalRequest is the control socket's goal op: list, or show one.
type GoalRequest struct {
	Op string `json:"op"` // list | show
	ID string `json:"id,omitempty"`
}

func (a *Core) goalOp(raw json.RawMessage) (any, error) {
	var req GoalRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, err
	}
	if a.goals == nil {
		return nil, errors.New("the goals are not pursued here")
	}
	return GoalDo(a.goals, req)
}

func GoalDo(rt *goals.Runtime, req GoalRequest) ([]goals.Goal, error) {
	switch req.Op {
	case "list":
		return rt.List(), nil
	case "show":
		g, err := rt.Get(req.ID)
		if err != nil {
			return nil, err
		}
		return []goals.Goal{g}, nil
	}
	return nil, fmt.Errorf("unknown goal op %q", req.Op)
}
