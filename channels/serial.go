package channels

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/clawedge/clawedge/hal/serialport"
)

// SerialConsole is the console on a serial line (a UART, a USB adapter, a PTY).
// It survives the device disappearing: it reopens it with backoff until ctx ends.
type SerialConsole struct {
	Handler Handler
	Device  string
	Baud    int
	Banner  string // written on every (re)connect, so a person sees it is alive
	Log     *slog.Logger
	// Open opens the device; nil means hal/serialport at Baud, 8N1, whose errors
	// name the device and say what to do (plug it in, join dialout, ...).
	Open func(device string, baud int) (io.ReadWriteCloser, error)
	// After waits between attempts; nil means time.After (tests pass a fake clock).
	After func(time.Duration) <-chan time.Time
}

// Channel is the audit name of this console: "console/ttyS0".
func (s *SerialConsole) Channel() string { return "console/" + filepath.Base(s.Device) }

// Run serves the line until ctx is done. It only returns ctx.Err().
func (s *SerialConsole) Run(ctx context.Context) error {
	open := s.Open
	if open == nil {
		open = openSerial
	}
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	after := s.After
	if after == nil {
		after = time.After
	}
	wait := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-after(d):
		}
	}
	backoff := 200 * time.Millisecond
	failed := 0 // attempts that failed in the current streak
	for ctx.Err() == nil {
		port, err := open(s.Device, s.Baud)
		if err != nil {
			// Once per streak, not every 5 s for as long as the adapter is unplugged:
			// the log is for news, and "still missing" is not news.
			if failed++; failed == 1 {
				log.Warn("serial console unavailable, retrying until it opens (logged once)", "device", s.Device, "err", err)
			}
			wait(backoff)
			backoff = min(backoff*2, 5*time.Second)
			continue
		}
		backoff = 200 * time.Millisecond
		if failed > 0 {
			log.Info("serial console ready", "device", s.Device, "baud", s.Baud, "failed_attempts", failed)
		} else {
			log.Info("serial console ready", "device", s.Device, "baud", s.Baud)
		}
		failed = 0
		// A blocking read cannot watch ctx; closing the port wakes it.
		stop := context.AfterFunc(ctx, func() { port.Close() })
		if s.Banner != "" {
			io.WriteString(port, s.Banner+"\r\n")
		}
		c := &Console{Handler: s.Handler, Channel: s.Channel(), User: "console", Prompt: "> ", Terminal: true}
		err = c.Serve(ctx, port, port)
		stop()
		port.Close()
		if ctx.Err() == nil {
			log.Warn("serial console lost, reopening", "device", s.Device, "err", err)
			wait(backoff)
		}
	}
	return ctx.Err()
}

func openSerial(device string, baud int) (io.ReadWriteCloser, error) {
	return serialport.Open(device, baud)
}
