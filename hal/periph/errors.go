package periph

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// ExplainGPIO turns an error on a GPIO chip or line into one that names the
// device and says what to do.
func ExplainGPIO(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on %s: add the user to the gpio group (sudo usermod -aG gpio $USER, then log in again): %w", path, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: this system has no such GPIO chip (on a board without GPIO, use driver: sim): %w", path, err)
	case errors.Is(err, syscall.EBUSY):
		return fmt.Errorf("%s is busy: another program or a kernel driver (a dtoverlay) holds the line; gpioinfo shows who: %w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// ExplainI2C turns an error on an I²C bus into one that names the device and
// says what to do.
func ExplainI2C(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on %s: add the user to the i2c group (sudo usermod -aG i2c $USER, then log in again): %w", path, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: enable I²C (sudo raspi-config nonint do_i2c 0, or dtparam=i2c_arm=on in config.txt) and reboot: %w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// ExplainSPI turns an error on an SPI device into one that names the device
// and says what to do.
func ExplainSPI(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied on %s: add the user to the spi group (sudo usermod -aG spi $USER, then log in again): %w", path, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: enable SPI (sudo raspi-config nonint do_spi 0, or dtparam=spi=on in config.txt) and reboot: %w", path, err)
	}
	return fmt.Errorf("%s: %w", path, err)
}
