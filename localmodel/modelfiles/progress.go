package modelfiles

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Progress draws a download's progress on a terminal line (redrawn in place
// at most every 200 ms) or, when the output is not a terminal (a log, a
// pipe), as one line every 10 %. Its Update method fits Request.Progress.
// A hand-written line rather than a progress-bar library: it is all a pull
// needs and keeps the static binary free of terminal dependencies.
type Progress struct {
	w        io.Writer
	label    string
	tty      bool
	now      func() time.Time
	start    time.Time
	first    int64 // bytes on disk when this run started (a resumed .part)
	last     time.Time
	lastStep int64 // last 10 % step printed (not a terminal)
	drawn    bool
	done     int64
	total    int64
}

// NewProgress writes to w; tty selects in-place redrawing.
func NewProgress(w io.Writer, label string, tty bool) *Progress {
	return &Progress{w: w, label: label, tty: tty, now: time.Now, first: -1, lastStep: -1, total: -1}
}

// Update records done of total bytes (total -1 when unknown).
func (p *Progress) Update(done, total int64) {
	now := p.now()
	if p.first < 0 {
		p.first, p.start = done, now
	}
	p.done, p.total = done, total
	if p.tty {
		if now.Sub(p.last) < 200*time.Millisecond && (total < 0 || done < total) {
			return
		}
		p.last = now
		fmt.Fprintf(p.w, "\r\x1b[K%s", p.line(now))
		p.drawn = true
		return
	}
	step := int64(-1)
	if total > 0 {
		step = done * 10 / total
	} else {
		step = done >> 26 // every 64 MiB when the size is unknown
	}
	if step != p.lastStep {
		p.lastStep = step
		fmt.Fprintln(p.w, p.line(now))
	}
}

// Finish ends a terminal line so that what follows starts on its own.
func (p *Progress) Finish() {
	if p.tty && p.drawn {
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", p.line(p.now()))
		p.drawn = false
	}
}

func (p *Progress) line(now time.Time) string {
	var b strings.Builder
	b.WriteString(p.label)
	b.WriteString("  ")
	if p.total > 0 {
		fmt.Fprintf(&b, "%3d%%  %s / %s", p.done*100/p.total, FormatBytes(p.done), FormatBytes(p.total))
	} else {
		b.WriteString(FormatBytes(p.done))
	}
	if el := now.Sub(p.start); el >= time.Second && p.done > p.first {
		rate := float64(p.done-p.first) / el.Seconds()
		fmt.Fprintf(&b, "  %s/s", FormatBytes(int64(rate)))
		if p.total > p.done {
			eta := time.Duration(float64(p.total-p.done) / rate * float64(time.Second))
			fmt.Fprintf(&b, "  %s left", eta.Round(time.Second))
		}
	}
	return b.String()
}
