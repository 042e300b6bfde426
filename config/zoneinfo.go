package config

import (
	"bufio"
	"compress/gzip"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The IANA zone database, compressed, for systems without /usr/share/zoneinfo
// (the SD image has none): 60 kB where time/tzdata costs 408 kB of binary and
// of the daemon's mapped text. Format and origin: zoneinfo_gen.go.
//
//go:generate go run zoneinfo_gen.go
//go:embed zoneinfo.gz
var zoneinfoGz string

// loadZone is time.LoadLocation, then the embedded database when the system
// has no such zone. Both are looked up only for a name someone configured.
func loadZone(name string, system func(string) (*time.Location, error)) (*time.Location, error) {
	loc, err := system(name)
	if err == nil {
		return loc, nil
	}
	data, ok, ferr := embeddedZone(name)
	if ferr != nil {
		return nil, ferr
	}
	if !ok {
		return nil, err // the system's "unknown time zone X"
	}
	return time.LoadLocationFromTZData(name, data)
}

// embeddedZone is the TZif file of the zone name from zoneinfoGz; false when
// there is none. It decompresses only up to that zone's bytes.
func embeddedZone(name string) ([]byte, bool, error) {
	zr, err := gzip.NewReader(strings.NewReader(zoneinfoGz))
	if err != nil {
		return nil, false, fmt.Errorf("embedded zone database: %w", err)
	}
	r := bufio.NewReader(zr)
	off, n := -1, 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, false, fmt.Errorf("embedded zone database: index: %w", err)
		}
		if line == "\n" {
			break
		}
		f := strings.Fields(line)
		if off < 0 && len(f) == 3 && f[0] == name {
			o, err1 := strconv.Atoi(f[1])
			l, err2 := strconv.Atoi(f[2])
			if err := errors.Join(err1, err2); err != nil {
				return nil, false, fmt.Errorf("embedded zone database: index: %w", err)
			}
			off, n = o, l
		}
	}
	if off < 0 {
		return nil, false, nil
	}
	if _, err := r.Discard(off); err != nil {
		return nil, false, fmt.Errorf("embedded zone database: %s: %w", name, err)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, false, fmt.Errorf("embedded zone database: %s: %w", name, err)
	}
	return data, true, nil
}
