package tools

import "github.com/clawedge/clawedge/grammar"

// Owned is a tool that acts on a thing of one principal's (a goal: cancel
// it, answer its question). The authorizer, not the tool, decides who may:
// that principal, one the policy names an owner, or a person at the board.
// OwnerOf says whose the thing args name is; ok is false when args name
// nothing there is (the tool then says it was not found, and nothing acts).
type Owned interface {
	Tool
	OwnerOf(args grammar.Args) (owner Principal, ok bool)
}

// ActsAs is the principal whose rights caller's call has: an automation's
// or a goal's creator, else the caller itself.
func ActsAs(caller Caller) Principal {
	if caller.Creator != nil {
		return *caller.Creator
	}
	return Principal{Channel: caller.Channel, User: caller.User, Actor: caller.Actor}
}
