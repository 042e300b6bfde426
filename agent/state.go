package agent

import "fmt"

// State is where a session is. The names are those of seeds/000's agent state machine,
// plus TIMEOUT, DENIED and NEEDS_APPROVAL; they appear in the store, in `clawedge status`
// and in logs, so they are part of the contract.
type State string

const (
	Idle          State = "IDLE"           // no turn in progress
	Planning      State = "PLANNING"       // the model is being asked what to do
	Executing     State = "EXECUTING"      // the model's calls are being checked and run, one by one
	NeedsApproval State = "NEEDS_APPROVAL" // a call waits for a person's approve/deny
	WaitingTool   State = "WAITING_TOOL"   // a call's audit intent is recorded and the tool runs
	Reflecting    State = "REFLECTING"     // results are fed back; the turn goes on or stops
	WaitingInput  State = "WAITING_INPUT"  // the turn ended with a question to the user
	Halted        State = "HALTED"         // the turn was stopped: a limit, a loop, a restart
	Error         State = "ERROR"          // the turn failed: the model or the store
	Timeout       State = "TIMEOUT"        // the turn's wall-time ran out, or an approval expired
	Denied        State = "DENIED"         // a call was refused (policy or a person)
)

// States lists every state, in the order above.
var States = []State{Idle, Planning, Executing, NeedsApproval, WaitingTool, Reflecting, WaitingInput, Halted, Error, Timeout, Denied}

// Busy reports whether s is a state inside a turn. A session found busy when the
// process starts was interrupted by a stop or crash.
func (s State) Busy() bool {
	switch s {
	case Planning, Executing, NeedsApproval, WaitingTool, Reflecting:
		return true
	}
	return false
}

// ended are the states a turn ends in; a new turn may start from each.
var ended = []State{Idle, WaitingInput, Halted, Error, Timeout, Denied}

// transitions is the state machine: from -> the states it may go to.
//
//	IDLE ─msg─► PLANNING ─calls─► EXECUTING ─► [NEEDS_APPROVAL ─► DENIED|TIMEOUT] ─► WAITING_TOOL ─► EXECUTING
//	               ▲  │                 │                                                             │
//	               │  └─answer─► IDLE / WAITING_INPUT        └──────────── all calls done ─► REFLECTING ┘
//	               └────────────── REFLECTING (more to do) ◄────────────────────────────────┘
//
// Any state of a turn may end in HALTED (a limit, a loop, an interruption found at
// start), ERROR (the model or the store failed) or TIMEOUT (the wall-time budget).
// DENIED and TIMEOUT are also passing states inside a turn: a refused or expired
// call is reported to the model and the turn goes on.
var transitions = map[State][]State{
	Planning:      {Executing, Idle, WaitingInput},
	Executing:     {NeedsApproval, WaitingTool, Denied, Reflecting, Executing},
	NeedsApproval: {WaitingTool, Denied, Timeout},
	WaitingTool:   {Executing, Reflecting, NeedsApproval, Denied, Timeout}, // the call path decides once the call is handed to it
	Reflecting:    {Planning},
	Denied:        {Executing, Reflecting},
	Timeout:       {Executing, Reflecting},
}

// CanTransition reports whether the machine allows from -> to.
func CanTransition(from, to State) bool {
	if to == Planning {
		for _, e := range ended {
			if from == e {
				return true
			}
		}
	}
	if from.Busy() || from == Denied || from == Timeout {
		switch to {
		case Halted, Error, Timeout:
			return true
		}
	}
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// transitionError is a bug in the loop, never a user's doing.
type transitionError struct{ from, to State }

func (e *transitionError) Error() string {
	return fmt.Sprintf("agent: invalid state transition %s -> %s", e.from, e.to)
}
