package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// fsckFAT is dosfstools' checker, staged with the runner's C runtime
// (scripts/image-runtime.sh); a core-only image (RUNNER=none) has none.
const fsckFAT = "/usr/sbin/fsck.fat"

// fsckTimeout bounds the check: a 96 MiB FAT takes about a second, and a
// hung checker must not keep the board from booting.
const fsckTimeout = 2 * time.Minute

// checkBoot checks and repairs the FAT boot partition dev before it is
// mounted, as Raspberry Pi OS does at every boot. FAT has no journal: a
// power cut while an update writes slot B's boot files can leave a
// directory entry naming clusters the FAT does not chain, and the kernel,
// meeting it, sets /boot read-only and every later update fails. It
// returns the console line; nothing it finds stops the boot.
func checkBoot(bin, dev string) string {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Sprintf("boot partition: not checked (no %s on this image)", bin)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fsckTimeout)
	defer cancel()
	// -a repairs without asking, the least destructive way; -w writes each
	// change at once rather than all at the end, so a cut during the
	// repair leaves less undone.
	out, err := exec.CommandContext(ctx, bin, "-a", "-w", dev).CombinedOutput()
	return fsckOutcome(dev, out, err)
}

// fsckOutcome turns fsck.fat's exit and output into one console line:
// exit 0 is a clean file system, 1 problems found and (with -a)
// corrected, anything else a failure (2 is a usage error; a signal or a
// timeout also lands here).
func fsckOutcome(dev string, out []byte, err error) string {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "boot partition: checked, clean"
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		problems := fsckProblems(out)
		noun := "problems"
		if len(problems) == 1 {
			noun = "problem"
		}
		return fmt.Sprintf("boot partition: checked, repaired %d %s (%s)", len(problems), noun, strings.Join(problems, "; "))
	default:
		said := ""
		if ps := fsckProblems(out); len(ps) > 0 {
			said = ": " + strings.Join(ps, "; ")
		}
		return fmt.Sprintf("boot partition: fsck.fat %s failed (%v)%s; mounting it as it is", dev, err, said)
	}
}

// fsckProblems picks the problems out of fsck.fat's report: each starts
// at the beginning of a line (what was done about it is indented under
// it); the version banner, progress lines, the closing summary ("DEV: N
// files, M/K clusters"), a problem's second line and the notes that the
// image has no iconv modules (fsck.fat then uses its own CP850 table) are
// not problems.
func fsckProblems(out []byte) []string {
	var ps []string
	for _, l := range strings.Split(string(bytes.TrimSpace(out)), "\n") {
		l = strings.TrimRight(l, " \r")
		switch {
		case l == "" || l[0] == ' ' || l[0] == '\t',
			strings.HasPrefix(l, "fsck.fat "),
			strings.Contains(l, " files, ") && strings.HasSuffix(l, " clusters"),
			l == "Performing changes.",
			strings.HasPrefix(l, "This is mostly harmless."), // the boot sector's backup differs: the offsets follow
			strings.HasPrefix(l, "Cannot initialize conversion "),
			strings.HasPrefix(l, "Using internal CP850 conversion table"),
			strings.HasPrefix(l, "Checking we can access the last sector"):
			continue
		}
		ps = append(ps, l)
	}
	return ps
}
