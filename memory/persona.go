package memory

// This file: the persona (SOUL.md) and what the assistant knows of its people
// (USER.md), read whole for the fixed start of the system prompt.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/clawedge/clawedge/internal/atomicfile"
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

// PersonaFile is the file of a persona name: "soul" is SOUL.md, "user"
// USER.md; anything else is not one.
func PersonaFile(name string) (string, bool) {
	switch name {
	case "soul":
		return SoulFile, true
	case "user":
		return UserFile, true
	}
	return "", false
}

// WritePersona replaces SOUL.md ("soul") or USER.md ("user") with text,
// atomically (a temporary file, synced, renamed over it: a power cut leaves
// the old file or the new one, never half of either), under the workspace's
// lock beside the CLI. The text must be UTF-8 without control characters but
// newlines and tabs, at most MaxPersonaBytes: what the prompt takes whole.
// Who may write is the authorizer's to decide (memory/persona).
func (w *Workspace) WritePersona(name, text string) (int, error) {
	file, ok := PersonaFile(name)
	if !ok {
		return 0, fmt.Errorf("memory: %q is not a persona file: soul (SOUL.md) or user (USER.md)", name)
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if hasControl(strings.ReplaceAll(text, "\t", " "), '\n') {
		return 0, fmt.Errorf("memory: %s: the text holds control characters or bytes that are not UTF-8", file)
	}
	if len(text) > w.lim.MaxPersonaBytes {
		return 0, fmt.Errorf("memory: %s would be %d bytes; at most %d: the prompt takes it whole", file, len(text), w.lim.MaxPersonaBytes)
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := os.MkdirAll(w.Dir, 0o700); err != nil {
		return 0, fmt.Errorf("memory: workspace: %w", err)
	}
	err := w.locked(func() error { return atomicfile.WriteFile(w.path(file), []byte(text), 0o600) })
	if err != nil {
		return 0, fmt.Errorf("memory: %s: %w", file, err)
	}
	return len(text), nil
}
