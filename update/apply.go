package update

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"
)

// Mode is how a written slot gets its one try.
type Mode string

const (
	// ModeTryboot uses the firmware's one-shot flag: tryboot.txt (config.txt
	// with the new slot's os_prefix) is read on the next boot only, so any
	// failure, power cut included, falls back to config.txt's slot.
	ModeTryboot Mode = "tryboot"
	// ModeFallback is for firmware without tryboot: config.txt itself is
	// switched to the new slot, and the new slot switches it back as the
	// first thing it does (Settle), until it commits. A kernel that dies
	// before Settle runs loops; tryboot has no such window.
	ModeFallback Mode = "fallback"
)

// RebootArg is the argument of the reboot(2) call that starts the try:
// "0 tryboot" (partition 0, the default, then the flag) for tryboot.
func (m Mode) RebootArg() string {
	if m == ModeTryboot {
		return "0 tryboot"
	}
	return ""
}

// Slot is one of the two root slots.
type Slot struct {
	Device string // its block device (or a file standing in for one)
	Root   string // the kernel's root= for it: PARTUUID=c1a3ed9e-03
}

// Updater applies bundles to the slot that is not running.
type Updater struct {
	Keys    []ed25519.PublicKey // trusted keys: the image's and config's update.key
	Board   string              // this board's name; a bundle for another is refused
	Running Version             // the running system's version
	Current string              // the running slot, "a" or "b"
	Slots   map[string]Slot
	Boot    BootFS
	Mode    Mode
	BootID  string // this boot's id (/proc/sys/kernel/random/boot_id)
	// OpenDevice opens a slot's device; nil means OpenDevice.
	OpenDevice func(path string) (Device, error)
	// Progress, if set, is told each phase's progress in bytes.
	Progress func(phase string, done, total int64)
	Now      func() time.Time
}

// Opener gives a bundle's bytes from the start; Apply calls it twice (a
// pass that verifies, a pass that writes), so nothing is written from
// bytes that were not verified and nothing needs the bundle in memory.
type Opener func(ctx context.Context) (io.ReadCloser, error)

// Errors of the checks before anything is written (wrapped).
var (
	ErrBoard     = errors.New("bundle is for another board")
	ErrOlder     = errors.New("bundle is older than the running version")
	ErrSame      = errors.New("bundle is the running version")
	ErrUnordered = errors.New("cannot tell whether the bundle is newer")
	ErrTooBig    = errors.New("root file system larger than the slot")
	ErrNoSlot    = errors.New("no inactive slot")
	ErrOnTrial   = errors.New("the running slot is on trial")
)

// Plan is what an update would do.
type Plan struct {
	Manifest Manifest
	From     Version
	Slot     string // the slot it goes to
	Newer    int    // Compare(bundle, running), when Ordered
	Ordered  bool
}

// Target is the slot an update writes: the one not running.
func (u *Updater) Target() (string, error) {
	if u.Current != "a" && u.Current != "b" {
		return "", fmt.Errorf("%w: the running slot is unknown (no %s= on the kernel command line)", ErrNoSlot, SlotParam)
	}
	t := map[string]string{"a": "b", "b": "a"}[u.Current]
	if _, ok := u.Slots[t]; !ok {
		return "", fmt.Errorf("%w: slot %s has no device", ErrNoSlot, t)
	}
	return t, nil
}

// Check verifies a whole bundle (signature, every size and sum) and says
// whether it may be applied here, writing nothing.
func (u *Updater) Check(ctx context.Context, open Opener, force bool) (Plan, error) {
	target, err := u.Target()
	if err != nil {
		return Plan{}, err
	}
	m, err := u.pass(ctx, open, "verifying", nil)
	if err != nil {
		return Plan{}, err
	}
	p := Plan{Manifest: m, From: u.Running, Slot: target}
	if m.Board != u.Board {
		return p, fmt.Errorf("%w: it is for %q, this is %q", ErrBoard, m.Board, u.Board)
	}
	p.Newer, p.Ordered = Compare(Version{m.Version, m.Epoch}, u.Running)
	if force {
		return p, nil
	}
	switch {
	case !p.Ordered:
		return p, fmt.Errorf("%w: %s vs running %s (pass --force to install it anyway)", ErrUnordered, m.Version, u.Running)
	case p.Newer < 0:
		return p, fmt.Errorf("%w: %s < %s (pass --force to go back)", ErrOlder, m.Version, u.Running)
	case p.Newer == 0:
		return p, fmt.Errorf("%w: %s (pass --force to write it again)", ErrSame, m.Version)
	}
	return p, nil
}

// pass reads a bundle through, handing each file to write (nil: discard).
func (u *Updater) pass(ctx context.Context, open Opener, phase string, write func(File, io.Reader) error) (Manifest, error) {
	rc, err := open(ctx)
	if err != nil {
		return Manifest{}, err
	}
	defer rc.Close()
	b, err := NewReader(rc, u.Keys)
	if err != nil {
		return Manifest{}, err
	}
	total, done := b.m.Total(), int64(0)
	for {
		if err := ctx.Err(); err != nil {
			return Manifest{}, err
		}
		f, r, err := b.Next()
		if err == io.EOF {
			return b.m, nil
		}
		if err != nil {
			return Manifest{}, err
		}
		pr := &progressReader{r: r, f: func(n int64) {
			done += n
			u.progress(phase, done, total)
		}}
		if write == nil {
			_, err = io.Copy(io.Discard, pr)
		} else {
			err = write(f, pr)
		}
		if err != nil {
			return Manifest{}, err
		}
	}
}

func (u *Updater) progress(phase string, done, total int64) {
	if u.Progress != nil {
		u.Progress(phase, done, total)
	}
}

func (u *Updater) now() time.Time {
	if u.Now != nil {
		return u.Now()
	}
	return time.Now()
}

type progressReader struct {
	r io.Reader
	f func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.f(int64(n))
	}
	return n, err
}

// Apply verifies the bundle, writes it to the inactive slot (its root to
// the slot's device, its boot files to the slot's folder on the boot
// partition), reads everything back, and arms one try boot of it. The
// caller then reboots with u.Mode.RebootArg(). Nothing is written unless
// the whole bundle verified and passed the checks of Check.
func (u *Updater) Apply(ctx context.Context, open Opener, force bool) (Plan, error) {
	p, err := u.Check(ctx, open, force)
	if err != nil {
		return p, err
	}
	slot := u.Slots[p.Slot]
	opendev := u.OpenDevice
	if opendev == nil {
		opendev = OpenDevice
	}
	dev, err := opendev(slot.Device)
	if err != nil {
		return p, fmt.Errorf("slot %s: %w", p.Slot, err)
	}
	defer dev.Close()
	size, err := dev.Size()
	if err != nil {
		return p, err
	}
	if root := p.Manifest.Root(); root.Size > size {
		return p, fmt.Errorf("%w: %s is %d bytes, slot %s (%s) %d", ErrTooBig, root.Name, root.Size, p.Slot, slot.Device, size)
	}
	st, err := LoadState(u.Boot)
	if err != nil {
		return p, err
	}
	// Disarming would make the slot on trial the default without it
	// having reported healthy.
	if a := st.Attempt; a != nil && a.Phase == PhaseTrying && a.Slot == u.Current {
		return p, fmt.Errorf("%w (update %s): it must report healthy before another update", ErrOnTrial, a.Version)
	}
	// From here on the boot partition and the slot change. First make sure
	// nothing boots the slot being written: no armed try of it is left.
	if err := u.disarm(); err != nil {
		return p, err
	}
	m := p.Manifest
	att := &Attempt{Slot: p.Slot, From: u.Current, Version: m.Version, Epoch: m.Epoch, Old: u.Running.Name,
		Mode: u.Mode, Phase: PhaseWriting, BootID: u.BootID, Started: u.now()}
	st.Attempt = att
	if st.Slots == nil {
		st.Slots = map[string]SlotState{}
	}
	delete(st.Slots, p.Slot)
	if err := saveState(u.Boot, st); err != nil {
		return p, err
	}
	if err := u.Boot.RemoveAll(SlotPrefix(p.Slot)); err != nil {
		return p, err
	}
	m2, err := u.pass(ctx, open, "writing", func(f File, r io.Reader) error {
		if f.Target == TargetRoot {
			return writeDevice(dev, r)
		}
		return u.Boot.WriteFile(slotFile(p.Slot, f.Name), r)
	})
	if err == nil && !reflect.DeepEqual(m2, m) {
		err = errors.New("the bundle changed between verifying and writing it")
	}
	if err == nil {
		err = dev.Sync()
	}
	if err == nil {
		err = u.readBack(dev, p.Slot, m)
	}
	if err == nil {
		err = u.writeCmdline(p.Slot, slot.Root)
	}
	if err == nil {
		err = u.arm(p.Slot)
	}
	if err != nil {
		att.Phase, att.Ended, att.Reason = PhaseFailed, u.now(), err.Error()
		saveState(u.Boot, st)
		return p, err
	}
	att.Phase = PhaseArmed
	st.Slots[p.Slot] = SlotState{Version: m.Version, Epoch: m.Epoch, Written: u.now()}
	return p, saveState(u.Boot, st)
}

// writeDevice streams r to the device from offset 0.
func writeDevice(dev Device, r io.Reader) error {
	buf := make([]byte, 1<<20)
	var off int64
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			if _, werr := dev.WriteAt(buf[:n], off); werr != nil {
				return werr
			}
			off += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// readBack checks that what is now in the slot is what the manifest signed:
// a card that drops writes fails here, before the slot is armed.
func (u *Updater) readBack(dev Device, slot string, m Manifest) error {
	total, done := m.Total(), int64(0)
	for _, f := range m.Files {
		var r io.Reader
		if f.Target == TargetRoot {
			r = io.NewSectionReader(dev, 0, f.Size)
		} else {
			rc, err := u.Boot.Open(slotFile(slot, f.Name))
			if err != nil {
				return fmt.Errorf("reading back: %w", err)
			}
			defer rc.Close()
			r = io.LimitReader(rc, f.Size+1)
		}
		h := sha256.New()
		n, err := io.Copy(h, &progressReader{r: r, f: func(n int64) { done += n; u.progress("reading back", done, total) }})
		if err != nil {
			return fmt.Errorf("reading back %s: %w", f.Name, err)
		}
		if got := hex.EncodeToString(h.Sum(nil)); n != f.Size || got != f.SHA256 {
			return fmt.Errorf("reading back %s from slot %s: %w", f.Name, slot, &ChecksumError{File: f.Name, Got: got, Want: f.SHA256})
		}
	}
	return nil
}

// writeCmdline gives the slot the running slot's kernel command line with
// its own root.
func (u *Updater) writeCmdline(slot, root string) error {
	cfg, err := readFile(u.Boot, ConfigTxt)
	if err != nil {
		return err
	}
	cur, err := readFile(u.Boot, OSPrefix(cfg)+CmdlineTxt)
	if err != nil {
		return fmt.Errorf("the running slot's %s: %w", CmdlineTxt, err)
	}
	return u.Boot.WriteFile(slotFile(slot, CmdlineTxt), bytes.NewReader([]byte(slotCmdline(string(cur), slot, root))))
}

// arm makes the next boot (only) boot slot.
func (u *Updater) arm(slot string) error {
	cfg, err := readFile(u.Boot, ConfigTxt)
	if err != nil {
		return err
	}
	name := TrybootTxt
	if u.Mode == ModeFallback {
		name = ConfigTxt
	}
	return u.Boot.WriteFile(name, bytes.NewReader(withOSPrefix(cfg, SlotPrefix(slot))))
}

// disarm makes sure the next boot is the running slot: no tryboot.txt, and
// config.txt on the running slot.
func (u *Updater) disarm() error {
	if err := u.Boot.Remove(TrybootTxt); err != nil {
		return err
	}
	return u.setDefault(u.Current)
}

// setDefault points config.txt's os_prefix at slot, if it is not already.
func (u *Updater) setDefault(slot string) error {
	cfg, err := readFile(u.Boot, ConfigTxt)
	if err != nil {
		return err
	}
	if OSPrefix(cfg) == SlotPrefix(slot) {
		return nil
	}
	return u.Boot.WriteFile(ConfigTxt, bytes.NewReader(withOSPrefix(cfg, SlotPrefix(slot))))
}
