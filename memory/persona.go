package memory

// This file: the persona (SOUL.md) and what the assistant knows of its people
// (USER.md), read whole for the fixed start of the system prompt.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Persona is SOUL.md and USER.md, each trimmed and cut to MaxPersonaBytes
// (cut is true when one was longer); a missing file is empty.
func (w *Workspace) Persona() (soul, user string, cut bool, err error) {
	read := func(name string) (string, error) {
		f, err := os.Open(w.path(name))
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil
		}
		if err != nil {
			return "", fmt.Errorf("memory: %w", err)
		}
		defer f.Close()
		b := make([]byte, w.lim.MaxPersonaBytes+1)
		n, err := readFull(f, b)
		if err != nil {
			return "", fmt.Errorf("memory: %s: %w", name, err)
		}
		if n > w.lim.MaxPersonaBytes {
			n, cut = w.lim.MaxPersonaBytes, true
		}
		return strings.TrimSpace(strings.ToValidUTF8(string(b[:n]), "")), nil
	}
	if soul, err = read(SoulFile); err != nil {
		return "", "", false, err
	}
	user, err = read(UserFile)
	return soul, user, cut, err
}
