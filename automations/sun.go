package automations

import (
	"math"
	"time"
)

// Sunrise and sunset are computed on the board, with no network, from NOAA's
// published solar calculator equations (the NOAA Global Monitoring Laboratory's
// "NOAA_Solar_Calculations_day" spreadsheet, after Meeus, Astronomical
// Algorithms): the sun's declination and the equation of time at the moment of
// the event, refined twice, and the hour angle of a sun 0.833° below the horizon
// (refraction and the sun's radius). NOAA gives their accuracy as about a minute
// between ±72° latitude, which the tests check against published tables.

// SunEvent is sunrise or sunset.
type SunEvent string

const (
	Sunrise SunEvent = "sunrise"
	Sunset  SunEvent = "sunset"
)

// SunTime returns the instant of ev on the UTC calendar day of day at lat, lon
// (degrees, east positive), and false when the sun does not rise or set that
// day (polar day or night).
func SunTime(ev SunEvent, day time.Time, lat, lon float64) (time.Time, bool) {
	y, m, d := day.UTC().Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	// The first estimate is at local noon; each pass evaluates the sun where the
	// event was last estimated, which is what makes the result exact to seconds.
	minutes := 720 - 4*lon
	for range 3 {
		t := midnight.Add(time.Duration(minutes * float64(time.Minute)))
		decl, eqTime := solarPosition(t)
		ha, ok := hourAngle(lat, decl)
		if !ok {
			return time.Time{}, false
		}
		noon := 720 - 4*lon - eqTime
		if ev == Sunrise {
			minutes = noon - 4*ha
		} else {
			minutes = noon + 4*ha
		}
	}
	return midnight.Add(time.Duration(minutes * float64(time.Minute))).Round(time.Second), true
}

// solarPosition returns the sun's declination (degrees) and the equation of
// time (minutes) at t.
func solarPosition(t time.Time) (decl, eqTime float64) {
	jd := float64(t.Unix())/86400 + 2440587.5
	jc := (jd - 2451545) / 36525
	l0 := math.Mod(280.46646+jc*(36000.76983+jc*0.0003032), 360)
	m := 357.52911 + jc*(35999.05029-0.0001537*jc)
	e := 0.016708634 - jc*(0.000042037+0.0000001267*jc)
	c := sin(m)*(1.914602-jc*(0.004817+0.000014*jc)) + sin(2*m)*(0.019993-0.000101*jc) + sin(3*m)*0.000289
	omega := 125.04 - 1934.136*jc
	appLong := l0 + c - 0.00569 - 0.00478*sin(omega)
	meanObliq := 23 + (26+(21.448-jc*(46.815+jc*(0.00059-jc*0.001813)))/60)/60
	obliq := meanObliq + 0.00256*cos(omega)
	decl = deg(math.Asin(sin(obliq) * sin(appLong)))
	y := math.Pow(math.Tan(rad(obliq/2)), 2)
	eqTime = 4 * deg(y*sin(2*l0)-2*e*sin(m)+4*e*y*sin(m)*cos(2*l0)-0.5*y*y*sin(4*l0)-1.25*e*e*sin(2*m))
	return decl, eqTime
}

// hourAngle is the sun's hour angle (degrees) at rise or set.
func hourAngle(lat, decl float64) (float64, bool) {
	x := cos(90.833)/(cos(lat)*cos(decl)) - math.Tan(rad(lat))*math.Tan(rad(decl))
	if x < -1 || x > 1 {
		return 0, false
	}
	return deg(math.Acos(x)), true
}

func rad(d float64) float64 { return d * math.Pi / 180 }
func deg(r float64) float64 { return r * 180 / math.Pi }
func sin(d float64) float64 { return math.Sin(rad(d)) }
func cos(d float64) float64 { return math.Cos(rad(d)) }

// nextSun is the first ev+offset strictly after t. SunTime gives one event per
// UTC day (the one of the solar day whose noon falls on it), so walking UTC days
// from just before t visits every event in order; two days back covers an
// offset of up to ±12h and any longitude.
func nextSun(ev SunEvent, offset time.Duration, t time.Time, lat, lon float64) time.Time {
	day := t.UTC().AddDate(0, 0, -2)
	for range 370 {
		if at, ok := SunTime(ev, day, lat, lon); ok {
			if at = at.Add(offset); at.After(t) {
				return at
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return time.Time{} // no such event within a year: a polar location
}
