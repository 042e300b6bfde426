package config

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestZZMeasure(t *testing.T) {
	size, _ := strconv.Atoi(os.Getenv("ZZSIZE"))
	depth, _ := strconv.Atoi(os.Getenv("ZZDEPTH"))
	unit := strings.Repeat("[", depth) + strings.Repeat("]", depth) + ","
	if os.Getenv("ZZUNIT") != "" {
		unit = os.Getenv("ZZUNIT")
	}
	data := []byte("x: [")
	for len(data)+len(unit)+1 < size {
		data = append(data, unit...)
	}
	if os.Getenv("ZZCUT") != "" {
		data = append(data, unit[:len(unit)/2]...)
	}
	if os.Getenv("ZZNOEND") == "" {
		data = append(data, ']')
	}
	var b, a runtime.MemStats
	runtime.ReadMemStats(&b)
	start := time.Now()
	_, err := Parse(data, "m.yaml", nil)
	el := time.Since(start)
	runtime.ReadMemStats(&a)
	msg := ""
	if err != nil {
		msg = err.Error()
		if len(msg) > 120 {
			msg = msg[:120]
		}
	}
	t.Logf("%q size %d: %v, %d MB, %s", unit[:min(10, len(unit))], size, el, (a.TotalAlloc-b.TotalAlloc)>>20, msg)
}
