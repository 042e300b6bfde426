package sensors_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/store"
)

// TestSamplingCost: ten sensors sampled every second on the simulated
// board (periph's drivers over the simulated chips, the history in a real
// store), for CLAWEDGE_SENSOR_BENCH (a duration such as 30s): the CPU time
// used and the heap kept. Issue 37's bound is 0.5 % of a core and 256 KiB.
func TestSamplingCost(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("CLAWEDGE_SENSOR_BENCH"))
	if err != nil {
		t.Skip("set CLAWEDGE_SENSOR_BENCH=30s to measure")
	}
	var buses []hal.BusConfig
	var specs []sensors.Spec
	for i := 0; i < 4; i++ {
		buses = append(buses, hal.BusConfig{Name: fmt.Sprintf("b%d", i), Bus: fmt.Sprint(i + 1)})
	}
	add := func(name, driver, bus string, addr uint16, id string) {
		specs = append(specs, sensors.Spec{Name: name, Driver: driver, Bus: bus, Address: addr, ID: id, Every: time.Second})
	}
	add("bme-a", "bme280", "b0", 0x76, "")
	add("bme-b", "bme280", "b0", 0x77, "")
	add("bme-c", "bme280", "b1", 0x76, "")
	add("bmp-a", "bmp280", "b1", 0x77, "")
	add("aht-a", "aht20", "b2", 0x38, "")
	add("ina-a", "ina219", "b2", 0x40, "")
	add("ina-b", "ina219", "b3", 0x41, "")
	add("aht-b", "aht20", "b3", 0x38, "")
	add("ds-a", "ds18b20", "w", 0, "28-00000a1b2c3d")
	add("ds-b", "ds18b20", "w", 0, "28-00000a1b2c3e")
	b, err := hal.Open(sim.New(), hal.Config{Buses: buses, OneWire: []hal.OneWireConfig{{Name: "w", Bus: "w1"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	set, err := sensors.Open(b, specs, sensors.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	hist, _ := st.History(store.HistoryOptions{})
	failed := 0
	smp := sensors.NewSampler(set, sensors.SamplerOptions{History: hist, OnSample: func(s sensors.Sample) {
		if s.Err != nil {
			failed++
		}
	}})

	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	u0 := cpu()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	smp.Run(ctx)
	used := cpu() - u0
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("10 sensors every 1s for %v: CPU %v (%.3f %% of a core), heap in use %+d KiB, %d failed reads",
		d, used, 100*used.Seconds()/d.Seconds(), (int64(m1.HeapInuse)-int64(m0.HeapInuse))>>10, failed)
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
