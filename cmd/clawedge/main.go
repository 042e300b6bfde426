// Command clawedge is the core of a board that acts on hardware: it opens the
// board, runs the command language, and serves the console channels.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/sandbox"
)

// version is stamped at build time: -ldflags "-X main.version=v0.1.0".
var version = "dev"

// exitError carries a specific exit status (e.g. 2 for "usage") through cobra.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

// shownError is a failure the command has already shown in full (exec's report of
// the calls that ran): main only sets the exit status.
type shownError struct{ code int }

func (e shownError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	// First, before anything else runs: the re-executed sandbox helper
	// confines itself and execs the program, and never returns.
	sandbox.Main()
	root := newRoot()
	if err := root.Execute(); err != nil {
		var se shownError
		if errors.As(err, &se) {
			os.Exit(se.code)
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}

// globalFlags are accepted by every command.
type globalFlags struct {
	config   string
	logLevel string
}

func newRoot() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "clawedge",
		Short: "An agent runtime for small boards: commands, tools and (soon) models that act on GPIO and serial",
		Long: `clawedge turns a small board into an assistant that acts on hardware.
With no config file it runs on a simulated Raspberry Pi board (pins led, button, relay).

Config is read from --config, else ./clawedge.yaml, else $XDG_CONFIG_HOME/clawedge/config.yaml,
else /etc/clawedge/config.yaml; with none, built-in defaults.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.config, "config", "", "config file (default: search ./clawedge.yaml, $XDG_CONFIG_HOME/clawedge/config.yaml, /etc/clawedge/config.yaml)")
	root.PersistentFlags().StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (default info for run, warn otherwise)")
	root.AddCommand(
		newRunCmd(g), newChatCmd(g), newExecCmd(g), newParseCmd(g),
		newConfigCmd(g), newDoctorCmd(g), newToolsCmd(g), newAuditCmd(g), newVersionCmd(),
		newModelCmd(g),
		newGenerateCmd(g),
		newStatusCmd(g),
		newSecretCmd(g),
		newSetupCmd(g),
		newAutoCmd(g),
		newGoalCmd(g),
		newSensorsCmd(g), // sensorscmd.go
		newMCPCmd(g),
		newPolicyCmd(g),
		newUpdateCmd(g),
		newMemoryCmd(g),
		newSkillCmd(g),
		newWebCmd(g),
		newBoardCmd(g),
	)
	return root
}
