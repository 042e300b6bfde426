package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/doctor"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/sandbox"
)

func newDoctorCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check config, board, pins, ports, store, models, doctor.Telegram, clock and disk; say what is missing and how to fix it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			checks := diagnose(g)
			failed := printChecks(cmd.OutOrStdout(), checks)
			if failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d problem(s) found", failed)}
			}
			return nil
		},
	}
}

func printChecks(w io.Writer, checks []doctor.Check) (failed int) {
	for _, c := range checks {
		mark := "ok  "
		if c.Warn {
			mark = "warn"
		}
		if !c.OK {
			mark = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "[%s] %s: %s\n", mark, c.What, c.Info)
		if (!c.OK || c.Warn) && c.Fix != "" {
			fmt.Fprintf(w, "       fix: %s\n", c.Fix)
		}
	}
	return failed
}

func diagnose(g *globalFlags) []doctor.Check {
	var checks []doctor.Check
	add := func(c doctor.Check) { checks = append(checks, c) }

	cfg, err := loadConfig(g)
	if err != nil {
		add(doctor.Check{What: "config", Info: err.Error(), Fix: "correct the file at the line and column shown (clawedge config check FILE)"})
		return checks
	}
	src := cfg.Source
	if src == "" {
		src = "none found, using built-in defaults (simulated board)"
	}
	add(doctor.Check{What: "config", OK: true, Info: src})

	add(doctor.DataDir(cfg.DataDir))
	d, err := dialDaemon(cfg)
	if err != nil {
		add(doctor.Check{What: "daemon", Info: err.Error(), Fix: "run doctor as the daemon's user; if the socket is someone else's, fix data_dir's owner and mode and restart clawedge"})
	} else if d != nil {
		// The daemon holds the store and the pins: ask it rather than open them.
		defer d.Close()
		checks = append(checks, doctor.Daemon(d, daemon.ControlPath(cfg))...)
	} else {
		add(doctor.Store(cfg.DataDir, daemon.RetentionOf(cfg)))
		checks = append(checks, doctor.Board(cfg)...)
	}
	if err == nil { // the daemon's last reads, else each sensor read here (sensors.go)
		checks = append(checks, doctor.Sensors(cfg, d)...)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Board.Ports)) {
		p := cfg.Board.Ports[name]
		add(doctor.Device("port "+name, p.Device, cfg.Board.Driver == "sim"))
	}
	if sc := cfg.Console.Serial; sc != nil {
		add(doctor.Device("serial console", sc.Device, false))
	}
	add(doctor.Automations(cfg)) // automations.go
	if cfg.Telegram.Token.Reveal() != "" {
		add(doctor.Telegram(cfg)) // the token is never printed, not even in part
	}
	if cfg.MQTT != nil {
		add(doctor.MQTT(cfg)) // mqtt.go; nor is the password
	}
	checks = append(checks, doctor.MCP(mcpStates(cfg))...)       // mcpclient.go
	checks = append(checks, doctor.Skills(cfg, os.Geteuid())...) // doctor_skills.go
	if m := cfg.Models.Local; m != nil {
		checks = append(checks, doctor.LocalModel(m, localmodel.FindRunner, "/proc/meminfo")...)
	}
	checks = append(checks, doctor.Remote(cfg.Models.Remote, doctor.RemoteTimeout)...)
	add(doctor.Memory(cfg))                         // doctor_memory.go
	add(doctor.Sandbox(cfg, sandbox.LandlockABI())) // doctor_sandbox.go
	add(doctor.WiFi(cfg.Network))                   // wifi.go
	add(doctor.Clock(time.Now(), doctor.InstalledAt(), doctor.KernelSynced))
	add(doctor.Disk(cfg.DataDir, syscall.Statfs))
	return checks
}
