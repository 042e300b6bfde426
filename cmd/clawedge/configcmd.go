package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/channels/mqtt"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/policy"
)

func newConfigCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "config", Short: "Check or show the configuration"}
	var show bool
	check := &cobra.Command{
		Use:   "check [FILE]",
		Short: "Validate a config file (default: the one clawedge would use); every problem with its line and column",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg *config.Config
			var err error
			if len(args) == 1 {
				cfg, err = loadWithSecrets(args[0]) // secret.go
			} else {
				cfg, err = loadConfig(g)
			}
			if err != nil {
				return err
			}
			src := cfg.Source
			if src == "" {
				src = "built-in defaults (no config file found)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%d pins, %d ports, driver %s)\n", src, len(cfg.Board.Pins), len(cfg.Board.Ports), cfg.Board.Driver)
			for _, w := range policyWarnings(cfg) {
				fmt.Fprintf(cmd.OutOrStdout(), "warning: %s\n", w)
			}
			if show {
				out, err := cfg.Redacted()
				if err != nil {
					return err
				}
				fmt.Fprint(cmd.OutOrStdout(), string(out))
			}
			return nil
		},
	}
	check.Flags().BoolVar(&show, "show", false, "also print the effective config (secrets redacted)")
	c.AddCommand(check)
	return c
}

// policyWarnings are what the policy makes of the config that is valid but
// likely not meant: outputs offered to Home Assistant that nobody there may
// switch (every set message would be refused).
func policyWarnings(cfg *config.Config) []string {
	var out []string
	if m := cfg.MQTT; m != nil {
		var outputs []string
		for name, p := range cfg.Board.Pins {
			if p.Mode == "out" && (m.Expose == nil || slices.Contains(m.Expose, name)) {
				outputs = append(outputs, name)
			}
		}
		slices.Sort(outputs)
		a, err := daemon.Listing(cfg, daemon.Options{Version: version})
		if err != nil {
			return append(out, "the config's tools cannot be listed: "+err.Error())
		}
		if act, why := a.Policy().Check(mqtt.Caller, "gpio/write"); len(outputs) > 0 && act != policy.Allow {
			out = append(out, fmt.Sprintf("mqtt exposes the outputs %s, but the policy says %s to gpio/write from mqtt (%s): Home Assistant's switches will be refused; "+
				"add policy.channels.mqtt: {gpio/write: allow} if anyone on the broker may switch them", strings.Join(outputs, ", "), act, why))
		}
	}
	return out
}
