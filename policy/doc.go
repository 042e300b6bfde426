// Package policy decides who may make a call: principals (tools.Caller), the
// layers of permission (profile, rules, users, automations, elevation, exec),
// and the one approval flow. Its Authorizer is what tools.Runner.Call asks
// before the intent of any call is recorded, whichever door the call came
// through; `clawedge policy explain` prints the same decision.
package policy
