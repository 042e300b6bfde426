package automations

import (
	"log/slog"
	"sync"
	"time"
)

// An automation that runs every second must not write a log line every
// second: on an SD card that is wear, and on a console it is noise (100 runs a
// second once wrote 2.6 MiB of log in four minutes). Each automation's lines of
// one kind are written when what they say changes (ok after errors, another
// error), and otherwise at most once per logEvery, saying how many were left
// out since. A line held back is still written at debug level (--log-level
// debug shows every run), which the daemon does not write by default.
const logEvery = 10 * time.Minute

type logRate struct {
	mu   sync.Mutex
	last map[string]logged // by automation and kind
}

type logged struct {
	at      time.Time
	what    string
	skipped int
}

// allow says whether the line what, of kind about automation name, is written
// now, and how many lines of the kind were left out before it.
func (l *logRate) allow(name, kind, what string, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last = map[string]logged{}
	}
	key := name + "\x00" + kind
	prev, seen := l.last[key]
	if seen && prev.what == what && now.Sub(prev.at) < logEvery {
		prev.skipped++
		l.last[key] = prev
		return false, 0
	}
	l.last[key] = logged{at: now, what: what}
	return true, prev.skipped
}

// level is the level to write a line of the given kind at: want when allow
// lets it through (with how many were held back before it), else debug.
func (l *logRate) level(name, kind, what string, now time.Time, want slog.Level) (slog.Level, int) {
	if ok, skipped := l.allow(name, kind, what, now); ok {
		return want, skipped
	}
	return slog.LevelDebug, 0
}
