package sensors_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/hal/sim"
	"github.com/clawedge/clawedge/sensors"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// A BME280 on the simulated board's I²C bus 1, read by periph's bmxx80
// driver, as the daemon wires it: the board, the sensors, their tools, the
// sampler into the store's history.
func Example() {
	board, err := hal.Open(sim.New(), hal.Config{Buses: []hal.BusConfig{{Name: "sensors", Bus: "1"}}})
	if err != nil {
		log.Fatal(err)
	}
	defer board.Close()

	// sensors.FromConfig(cfg.Board) gives these from the config file.
	specs := []sensors.Spec{{
		Name: "greenhouse", Driver: "bme280", Bus: "sensors", Address: 0x76, Every: 30 * time.Second,
		Sim: map[sensors.Quantity]float64{sensors.Temperature: 21.5, sensors.Humidity: 40, sensors.Pressure: 1013.2},
	}}
	set, err := sensors.Open(board, specs, sensors.Options{})
	if err != nil {
		log.Fatal(err)
	}

	gh, _ := set.Sensor("greenhouse")
	readings, err := gh.Read(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range readings {
		fmt.Println(r)
	}

	// The world changes (sim/set does this on the simulated board).
	set.Simulate("greenhouse", sensors.Temperature, -4.25)
	r, _ := gh.ReadQuantity(context.Background(), sensors.Temperature)
	fmt.Println(r)

	// The daemon's part: the tools, and the sampler into the history.
	dir, _ := tempDir()
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	hist, _ := st.History(store.HistoryOptions{})
	reg := tools.NewRegistry()
	sensors.Register(reg, set, hist)
	sensors.RegisterSim(reg, set) // only on the simulated board
	sampler := sensors.NewSampler(set, sensors.SamplerOptions{History: hist})
	sampler.Start(context.Background())
	sampler.Stop()
	for _, s := range reg.Specs() {
		fmt.Println(s.Name)
	}
	// Output:
	// temperature 21.50 °C
	// humidity 40.00%
	// pressure 1013.20 hPa
	// temperature -4.25 °C
	// sensor/history
	// sensor/list
	// sensor/read
	// sim/set
}
