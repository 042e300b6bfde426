package update

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/clawedge/clawedge/internal/atomicfile"
)

// BootFS is the firmware's FAT boot partition as the updater edits it:
// config.txt, tryboot.txt, each slot's folder (kernel, device trees,
// cmdline.txt) and the update state. A directory implements it (DirFS); on
// the board that is the mounted partition.
type BootFS interface {
	Open(name string) (io.ReadCloser, error)
	// WriteFile replaces name with what r gives: a crash or power cut leaves
	// the old content or the new, never a mix (write beside, sync, rename).
	WriteFile(name string, r io.Reader) error
	Remove(name string) error // a missing file is not an error
	RemoveAll(dir string) error
}

// DirFS is a BootFS over a directory.
type DirFS string

func (d DirFS) path(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

func (d DirFS) Open(name string) (io.ReadCloser, error) { return os.Open(d.path(name)) }

// readFile reads a small boot file (config.txt, cmdline.txt, the state).
func readFile(b BootFS, name string) ([]byte, error) {
	f, err := b.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

func (d DirFS) WriteFile(name string, r io.Reader) error {
	p := d.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// Whole or not at all, on vfat too (atomicfile flushes the file again
	// after the rename: TestRollbackInQEMU's power cut found it empty).
	return atomicfile.Write(p, r, 0o644)
}

func (d DirFS) Remove(name string) error {
	err := os.Remove(d.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syncPath(filepath.Dir(d.path(name)))
}

func (d DirFS) RemoveAll(dir string) error { return os.RemoveAll(d.path(dir)) }

// syncPath fsyncs a file, or a directory (which makes a rename or removal
// in it durable).
func syncPath(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// Files on the boot partition.
const (
	ConfigTxt  = "config.txt"
	TrybootTxt = "tryboot.txt"
	CmdlineTxt = "cmdline.txt"
	StateFile  = "clawedge-update.json"
)

// SlotPrefix is a slot's folder on the boot partition, as config.txt's
// os_prefix names it: the firmware loads the kernel, the device trees,
// their overlays and cmdline.txt from there.
func SlotPrefix(slot string) string { return "slot-" + slot + "/" }

// OSPrefix reads the os_prefix of a config.txt's common part (before the
// first [filter] section), "" if it has none.
func OSPrefix(cfg []byte) string {
	for _, line := range strings.Split(string(cfg), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "[") {
			break
		}
		if v, ok := strings.CutPrefix(line, "os_prefix="); ok {
			return v
		}
	}
	return ""
}

// withOSPrefix returns cfg with its common os_prefix set to prefix (added
// before the first [filter] section if it has none); every other byte is
// kept as it was.
func withOSPrefix(cfg []byte, prefix string) []byte {
	lines := strings.SplitAfter(string(cfg), "\n")
	set := "os_prefix=" + prefix + "\n"
	at := len(lines)
	for i, line := range lines {
		if strings.HasPrefix(line, "[") {
			at = i
			break
		}
		if strings.HasPrefix(line, "os_prefix=") {
			lines[i] = set
			return []byte(strings.Join(lines, ""))
		}
	}
	var b bytes.Buffer
	for _, l := range lines[:at] {
		b.WriteString(l)
	}
	if b.Len() > 0 && !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteByte('\n')
	}
	b.WriteString(set)
	for _, l := range lines[at:] {
		b.WriteString(l)
	}
	return b.Bytes()
}

// slotCmdline is cmdline for another slot: root= pointed at its root and
// clawedge.slot= naming it (added if missing), other words unchanged.
func slotCmdline(cmdline, slot, root string) string {
	words := strings.Fields(cmdline)
	hasRoot, hasSlot := false, false
	for i, w := range words {
		switch {
		case strings.HasPrefix(w, "root="):
			words[i], hasRoot = "root="+root, true
		case strings.HasPrefix(w, SlotParam+"="):
			words[i], hasSlot = SlotParam+"="+slot, true
		}
	}
	if !hasRoot {
		words = append(words, "root="+root)
	}
	if !hasSlot {
		words = append(words, SlotParam+"="+slot)
	}
	return strings.Join(words, " ") + "\n"
}

// SlotParam is the kernel parameter naming the running slot.
const SlotParam = "clawedge.slot"

// RunningSlot reads the slot a kernel command line (/proc/cmdline) names.
func RunningSlot(cmdline string) (string, bool) {
	for _, w := range strings.Fields(cmdline) {
		if v, ok := strings.CutPrefix(w, SlotParam+"="); ok && (v == "a" || v == "b") {
			return v, true
		}
	}
	return "", false
}

func slotFile(slot, name string) string { return path.Join(SlotPrefix(slot), name) }

// Status is what `clawedge update status` shows.
type Status struct {
	State   State
	Default string // the slot config.txt boots
	Armed   string // the slot tryboot.txt would boot, if armed
}

// ReadStatus reads the state and the boot files.
func ReadStatus(b BootFS, current string) (Status, error) {
	st, err := LoadState(b)
	if err != nil {
		return Status{}, err
	}
	s := Status{State: st}
	if cfg, err := readFile(b, ConfigTxt); err == nil {
		s.Default = prefixSlot(OSPrefix(cfg))
	} else {
		return s, err
	}
	if cfg, err := readFile(b, TrybootTxt); err == nil {
		s.Armed = prefixSlot(OSPrefix(cfg))
	}
	if s.Default == "" {
		s.Default = current // no os_prefix: a single-slot layout
	}
	return s, nil
}

func prefixSlot(prefix string) string {
	switch prefix {
	case SlotPrefix("a"):
		return "a"
	case SlotPrefix("b"):
		return "b"
	}
	return ""
}
