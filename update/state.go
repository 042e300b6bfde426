package update

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"
)

// State is what the updater keeps on the boot partition (StateFile): the
// version in each slot and the last attempt. It lives there, not on /perm,
// because an update never writes /perm, and the boot partition is written
// by every update anyway.
type State struct {
	Slots   map[string]SlotState `json:"slots,omitempty"`
	Attempt *Attempt             `json:"attempt,omitempty"`
}

// SlotState is the version a slot holds, as written by the updater.
type SlotState struct {
	Version string    `json:"version"`
	Epoch   int64     `json:"epoch,omitempty"`
	Written time.Time `json:"written"`
}

// Phases of an attempt.
const (
	PhaseWriting   = "writing"   // the inactive slot is being written
	PhaseArmed     = "armed"     // written and verified; the next boot tries it
	PhaseTrying    = "trying"    // booted into it; waiting for clawedge to report healthy
	PhaseCommitted = "committed" // healthy: it is the default slot now
	PhaseFailed    = "failed"    // the old slot came back; Reason says why
)

// Attempt is one update, from writing to commit or failure.
type Attempt struct {
	Slot    string    `json:"slot"` // the slot tried
	From    string    `json:"from"` // the slot it was applied from
	Version string    `json:"version"`
	Epoch   int64     `json:"epoch,omitempty"`
	Old     string    `json:"old_version"`
	Mode    Mode      `json:"mode"`
	Phase   string    `json:"phase"`
	BootID  string    `json:"boot_id,omitempty"` // the boot that armed it
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	Reason  string    `json:"reason,omitempty"`
}

func (a Attempt) String() string {
	s := fmt.Sprintf("%s -> %s (slot %s, %s): %s", a.Old, a.Version, a.Slot, a.Mode, a.Phase)
	if a.Reason != "" {
		s += ": " + a.Reason
	}
	return s
}

// LoadState reads the state; a missing file is an empty state.
func LoadState(b BootFS) (State, error) {
	data, err := readFile(b, StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, err
	}
	var s State
	if err := json.Unmarshal(data, &s); err != nil {
		return State{}, fmt.Errorf("%s: %w", StateFile, err)
	}
	return s, nil
}

func saveState(b BootFS, s State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return b.WriteFile(StateFile, bytes.NewReader(append(data, '\n')))
}
