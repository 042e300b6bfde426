package mcpclient

import (
	"context"
	"os/exec"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// inGroup makes cmd the leader of a process group of its own, killed whole
// when cmd's context ends, and bounds how long Wait waits for its output
// once it exited: a grandchild left holding stderr must not hold clawedge.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
}

// groupTransport is the SDK's command transport whose Close, after the
// SDK's own shutdown (stdin closed, then SIGTERM, then SIGKILL to the
// child), kills the rest of the child's process group: what a server started
// (npx starts npm, which starts node) does not outlive it.
type groupTransport struct{ cmd *exec.Cmd }

func (t *groupTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := (&mcp.CommandTransport{Command: t.cmd, TerminateDuration: 2 * time.Second}).Connect(ctx)
	// The child holds its own copies of the files handed to it (the
	// sandbox's spec pipe): this process's go now, started or not.
	for _, f := range t.cmd.ExtraFiles {
		f.Close()
	}
	if err != nil {
		if t.cmd.Process != nil {
			killGroup(t.cmd.Process.Pid)
		}
		return nil, err
	}
	return groupConn{Connection: c, pid: t.cmd.Process.Pid}, nil
}

type groupConn struct {
	mcp.Connection
	pid int
}

func (c groupConn) Close() error {
	err := c.Connection.Close()
	killGroup(c.pid)
	return err
}

// killGroup kills process group pgid. The group's id stays reserved while
// any member lives, so this never reaches a stranger.
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }
