package mcp

import (
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Command is the stdio transport of a client that starts its server: the
// command's stdin and stdout carry the messages; the caller sets its
// environment and stderr. Closing it closes stdin, waits a second for the
// server to exit and then kills it.
type Command struct {
	*Stream
	cmd  *exec.Cmd
	in   io.WriteCloser
	once sync.Once
	err  error
}

// StartCommand starts cmd (not yet started) and connects to its stdio.
func StartCommand(cmd *exec.Cmd) (*Command, error) {
	// A grandchild that keeps stderr open must not keep Close waiting.
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", filepath.Base(cmd.Path), err)
	}
	c := &Command{cmd: cmd, in: in}
	c.Stream = NewStream("stdout of "+filepath.Base(cmd.Path), out, in, nil)
	return c, nil
}

func (c *Command) Close() error {
	c.once.Do(func() {
		c.in.Close()
		exited := make(chan error, 1)
		go func() { exited <- c.cmd.Wait() }()
		t := time.NewTimer(time.Second)
		defer t.Stop()
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				c.err = err
			}
		case <-t.C:
			c.cmd.Process.Kill()
			<-exited
		}
	})
	return c.err
}
