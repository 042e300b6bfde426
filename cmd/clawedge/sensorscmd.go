package main

// This file: `clawedge sensors [--json]`: each sensor of board.sensors, its
// driver and bus, and its last reading with its age. With a daemon running
// they are the daemon's (its sampler's last reads, through the control
// socket's read-only op "sensors": no chip is read); without one the board
// is opened here and each sensor read once.

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/termsafe"
)

func newSensorsCmd(g *globalFlags) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "sensors",
		Short: "List the sensors: driver, bus, the last reading and its age (the daemon's, or read now without one)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, fromDaemon, err := sensorsReport(cmd, g)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd, list)
			}
			printSensors(cmd.OutOrStdout(), list, fromDaemon)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: name, driver, bus, address or id, every, readings (quantity, value, unit), error, at, age_s")
	return cmd
}

// sensorsReport asks the daemon for its sensors, or opens the board and
// reads each once when none runs.
func sensorsReport(cmd *cobra.Command, g *globalFlags) (list []daemon.SensorInfo, fromDaemon bool, err error) {
	cfg, err := loadConfig(g)
	if err != nil {
		return nil, false, err
	}
	d, err := dialDaemon(cfg)
	if err != nil {
		return nil, false, err
	}
	if d != nil {
		defer d.Close()
		raw, err := d.Op("sensors", nil)
		if err != nil {
			return nil, true, fmt.Errorf("the daemon's sensors: %w", err)
		}
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, true, fmt.Errorf("the daemon's sensors: %w", err)
		}
		return list, true, nil
	}
	if len(cfg.Board.Sensors) == 0 {
		return []daemon.SensorInfo{}, false, nil
	}
	a, err := openCore(cfg, g)
	if err != nil {
		return nil, false, err
	}
	defer a.Close()
	return a.Sensors(cmd.Context(), true), false, nil
}

func printSensors(out io.Writer, list []daemon.SensorInfo, fromDaemon bool) {
	if len(list) == 0 {
		fmt.Fprintln(out, "No sensors configured (board.sensors; see docs/sensors.md).")
		return
	}
	if fromDaemon {
		fmt.Fprintln(out, "The daemon's last reads:")
	} else {
		fmt.Fprintln(out, "No daemon running: each sensor read now.")
	}
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDRIVER\tBUS\tEVERY\tLAST READING\tAGE")
	for _, s := range list {
		at := s.Address
		if s.ID != "" {
			at = s.ID
		}
		last, age := "not read yet", "-"
		if !s.At.IsZero() {
			age = (time.Duration(s.Age * float64(time.Second))).Round(time.Second).String()
		}
		switch {
		case s.Error != "":
			last = "FAILED: " + s.Error
		case len(s.Readings) > 0:
			parts := make([]string, len(s.Readings))
			for i, r := range s.Readings {
				parts[i] = r.Text
			}
			last = strings.Join(parts, ", ")
		}
		if s.Simulated {
			at += ", simulated"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s (%s)\t%s\t%s\t%s\n", termsafe.Line(s.Name), s.Driver, termsafe.Line(s.Bus), at, s.Every, termsafe.Line(last), age)
	}
	tw.Flush()
}
