package automations

import (
	"testing"
	"time"
)

// Published sunrise and sunset times; the computation must agree within 2 minutes.
//
// Sources:
//   - geoastro.de, "Sunrise/sunset diagram for Berlin (52.51° N, 13.41° E)",
//     http://www.geoastro.de/planets/img/sun.html: latest sunrise 2002-12-30 07:17.1 UT,
//     earliest sunset 2002-12-14 14:52.2 UT.
//   - Stiftung Planetarium Berlin, quoted by Tagesspiegel Checkpoint (winter solstice
//     2024, Berlin averaged): sunrise 08:14:38, sunset 15:54:41 CET on 2024-12-21.
//   - Sunset Sunrise Calendars, quoted at betterworld2016.org: New York 2020-12-21
//     sunrise 7:16 a.m. EST. (Its sunset, 4:29 p.m., is not used: it disagrees with
//     the Hayden Planetarium's tables, which give 4:32 p.m. for that date.)
//   - Joe Rao, Hayden Planetarium (NYT Sky Watch, week of 2009-06-21): New York's
//     earliest sunrise 2009-06-14 at 5:24 a.m. EDT, latest sunset 2009-06-27 at
//     8:31 p.m. EDT.
func TestSunPublishedTables(t *testing.T) {
	berlin := [2]float64{52.51, 13.41}
	berlinMid := [2]float64{52.52, 13.40}
	nyc := [2]float64{40.7128, -74.0060}
	cet := time.FixedZone("CET", 3600)
	est := time.FixedZone("EST", -5*3600)
	edt := time.FixedZone("EDT", -4*3600)
	for _, tc := range []struct {
		where [2]float64
		ev    SunEvent
		want  time.Time
	}{
		{berlin, Sunrise, time.Date(2002, 12, 30, 7, 17, 6, 0, time.UTC)},
		{berlin, Sunset, time.Date(2002, 12, 14, 14, 52, 12, 0, time.UTC)},
		{berlinMid, Sunrise, time.Date(2024, 12, 21, 8, 14, 38, 0, cet)},
		{berlinMid, Sunset, time.Date(2024, 12, 21, 15, 54, 41, 0, cet)},
		{nyc, Sunrise, time.Date(2020, 12, 21, 7, 16, 30, 0, est)},
		{nyc, Sunrise, time.Date(2009, 6, 14, 5, 24, 30, 0, edt)},
		{nyc, Sunset, time.Date(2009, 6, 27, 20, 31, 30, 0, edt)},
	} {
		// The local date's noon names the day (a New York sunset is on the next UTC day).
		y, m, d := tc.want.Date()
		got, ok := SunTime(tc.ev, time.Date(y, m, d, 12, 0, 0, 0, tc.want.Location()), tc.where[0], tc.where[1])
		if !ok {
			t.Errorf("%s %v: no event", tc.ev, tc.want)
			continue
		}
		if d := got.Sub(tc.want).Abs(); d > 2*time.Minute {
			t.Errorf("%s at %v on %v: got %v, %v off", tc.ev, tc.where, tc.want, got.In(tc.want.Location()), d)
		}
	}
}

func TestSunPolar(t *testing.T) {
	// Tromsø (69.65° N) has no sunrise in mid-December and no sunset in late June.
	if _, ok := SunTime(Sunrise, time.Date(2024, 12, 21, 12, 0, 0, 0, time.UTC), 69.65, 18.96); ok {
		t.Error("sunrise in Tromsø at the winter solstice")
	}
	if _, ok := SunTime(Sunset, time.Date(2024, 6, 21, 12, 0, 0, 0, time.UTC), 69.65, 18.96); ok {
		t.Error("sunset in Tromsø at the summer solstice")
	}
	// nextSun skips the polar night to the first sunrise after it (mid-January).
	got := nextSun(Sunrise, 0, time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC), 69.65, 18.96)
	if got.Month() != time.January || got.Year() != 2025 {
		t.Errorf("first sunrise after the polar night: %v", got)
	}
}

func TestNextSunOffset(t *testing.T) {
	berlin := time.Date(2024, 12, 21, 12, 0, 0, 0, time.UTC)
	set, _ := SunTime(Sunset, berlin, 52.52, 13.40)
	got := nextSun(Sunset, -15*time.Minute, berlin, 52.52, 13.40)
	if !got.Equal(set.Add(-15 * time.Minute)) {
		t.Errorf("sunset-15m = %v, want %v", got, set.Add(-15*time.Minute))
	}
	// Just after today's (offset) event, the next one is tomorrow's.
	next := nextSun(Sunset, -15*time.Minute, got, 52.52, 13.40)
	if d := next.Sub(got); d < 23*time.Hour || d > 25*time.Hour {
		t.Errorf("next sunset after %v is %v", got, next)
	}
}
