package automations

import (
	"time"
)

// nextTime is the first due time of a time trigger strictly after `after`, or
// the zero time when there is none (a one-shot already past).
//
// Cron runs on the wall clock of loc, computed on a "floating" copy of it (the
// local date and time written as if they were UTC, where every day has 24 hours):
// the library finds the next matching wall time W after the last one, and W is
// then placed in loc with time.Date. This is how DST is handled:
//   - a wall time that does not exist (02:30 on the spring-forward night) is
//     placed by place() with the offset from before the change, which is after the
//     jump (03:30): the job runs once, late, never early;
//   - a wall time that happens twice (02:30 on the fall-back night) is one floating
//     time, so it is found once and placed at its first occurrence: the job never
//     runs twice. lastWall (the floating time of the last run) makes sure a
//     run in the first pass is not found again in the second.
func (j *job) nextTime(after time.Time) time.Time {
	s := &j.spec
	switch s.Kind() {
	case "cron":
		from := floating(after.In(j.loc))
		if j.lastWall.After(from) {
			from = j.lastWall
		}
		w := j.cron.Next(from)
		if w.IsZero() {
			return w
		}
		t := place(w, j.loc)
		if !t.After(after) {
			// A nonexistent wall time placed before `after` by the zone rules
			// (cannot happen in real zones); look past it.
			return j.nextAfterWall(w)
		}
		return t
	case "every":
		if j.anchor.IsZero() {
			return after.Add(s.Every)
		}
		if !j.anchor.After(after) {
			k := after.Sub(j.anchor)/s.Every + 1
			return j.anchor.Add(k * s.Every)
		}
		return j.anchor
	case "at":
		if s.At.After(after) {
			return s.At
		}
		return time.Time{}
	case "sun":
		return nextSun(s.Sun, s.Offset, after, j.lat, j.lon)
	}
	return time.Time{}
}

func (j *job) nextAfterWall(w time.Time) time.Time {
	if w = j.cron.Next(w); w.IsZero() {
		return w
	}
	return place(w, j.loc)
}

// place is the instant of the floating wall time w in loc. Around a change of
// offset, w is tried with the offsets before and after it: when both give w back
// (an hour that happens twice) the first is taken; when neither does (an hour
// skipped) the later, which falls just after the jump. time.Date leaves that
// choice unspecified, and does differ between zones.
func place(w time.Time, loc *time.Location) time.Time {
	t := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, loc)
	_, before := t.Add(-3 * time.Hour).Zone()
	_, after := t.Add(3 * time.Hour).Zone()
	a := w.Add(-time.Duration(before) * time.Second).In(loc)
	b := w.Add(-time.Duration(after) * time.Second).In(loc)
	okA, okB := floating(a).Equal(w), floating(b).Equal(w)
	switch {
	case okA && okB:
		if b.Before(a) {
			return b
		}
		return a
	case okA:
		return a
	case okB:
		return b
	case a.After(b):
		return a
	}
	return b
}

// floating writes t's wall clock as a UTC time.
func floating(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
}
