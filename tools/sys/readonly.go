package sys

// The sys tools without effects (tools.ReadOnly): their audit records are
// written after they ran, in a group commit.

func (auditTool) ReadOnly()  {}
func (statusTool) ReadOnly() {}
func (helpTool) ReadOnly()   {}
