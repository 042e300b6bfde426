// Package serialport opens real serial devices (USB adapters, the Pi's UART,
// a PTY made by socat) through go.bug.st/serial for any hal driver, with
// errors that say what to do.
package serialport

import (
	"errors"
	"fmt"
	"io/fs"

	"go.bug.st/serial"

	"github.com/clawedge/clawedge/hal"
)

// Open opens device at baud, 8N1, raw, with RTS/CTS off. The modem lines are
// left as the kernel sets them: the ioctls that set them fail on a PTY.
func Open(device string, baud int) (hal.PortConn, error) {
	p, err := serial.Open(device, &serial.Mode{BaudRate: baud})
	if err != nil {
		return nil, Explain(device, err)
	}
	return p, nil
}

// Explain turns an error from opening device into one that names it and says
// what to do about it.
func Explain(device string, err error) error {
	var pe *serial.PortError
	code := serial.PortErrorCode(-1)
	if errors.As(err, &pe) {
		code = pe.Code()
	}
	switch {
	case code == serial.PortNotFound || errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: is the device plugged in? (ls /dev/serial/by-id): %w", device, err)
	case code == serial.PermissionDenied || errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on %s: add the user to the dialout group (sudo usermod -aG dialout $USER, then log in again): %w", device, err)
	case code == serial.PortBusy:
		return fmt.Errorf("%s is busy: another program has it open (fuser %s): %w", device, device, err)
	case code == serial.InvalidSerialPort:
		return fmt.Errorf("%s is not a serial port: %w", device, err)
	case code == serial.InvalidSpeed:
		return fmt.Errorf("%s does not support this baud rate: %w", device, err)
	}
	return fmt.Errorf("opening %s: %w", device, err)
}
