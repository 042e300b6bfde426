package tools

// Role is what a door lets one of its principals do, beyond who they are:
// the dashboard pairs each browser as a viewer, an operator or an owner.
// The policy decides with it (a layer of its own), so a refusal is audited
// like any other; "" is a door without roles.
type Role string

const (
	// RoleViewer reads: pages, pins, audit, approvals; it never calls.
	RoleViewer Role = "viewer"
	// RoleOperator calls tools like any person, as the policy allows.
	RoleOperator Role = "operator"
	// RoleOwner also answers approvals (the authorizer still decides whether
	// this principal may decide each one).
	RoleOwner Role = "owner"
)

// BoardOnly is a tool that changes who may act on the board (pairing a
// browser, revoking one, installing an update): the authorizer runs it only
// for a person at the board or an owner, in person, never for a model, a
// program or an automation, whatever the rules say.
type BoardOnly interface {
	Tool
	BoardOnly()
}
