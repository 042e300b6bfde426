package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/update"
)

// On the SD image, clawedge runs unprivileged and clawedge-init (root)
// does the boot-time part of an update through two commands it runs as
// root: `clawedge update settle` early at boot, and `clawedge update commit`
// once the daemon said READY=1 on init's notify socket (sd_notify, sent
// when the config loaded, the store and board opened and the channels
// came up). A failed attempt's message reaches the daemon in
// $CLAWEDGE_UPDATE_REPORT, which it tells the console and the owners.

// UpdateReportEnv carries a failed update's message from init to the daemon.
const UpdateReportEnv = "CLAWEDGE_UPDATE_REPORT"

// updateReport is the message of a failed update to tell once ready, taken
// out of the environment so that no child inherits it.
func updateReport() string {
	s := os.Getenv(UpdateReportEnv)
	os.Unsetenv(UpdateReportEnv)
	return s
}

// bootStepCmd is a boot-time step init runs as root: step edits the boot
// partition (remounted read-write around it) and says what to print.
func bootStepCmd(g *globalFlags, use, short, long string, step func(*update.Updater) (string, error)) *cobra.Command {
	var f updateFlags
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Args: cobra.NoArgs, Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := f.updater(g, false)
			if err != nil {
				return err
			}
			var out string
			if err := update.WithWritable(f.boot, func() (err error) { out, err = step(u); return err }); err != nil {
				return err
			}
			if out != "" {
				fmt.Fprintln(cmd.OutOrStdout(), out)
			}
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func newUpdateSettleCmd(g *globalFlags) *cobra.Command {
	return bootStepCmd(g, "settle", "At boot (clawedge-init runs it): end a failed update attempt, put a tried slot on trial",
		`Prints one line: "failed: MESSAGE" when the last attempt failed (the previous
slot is running again), "trying: MESSAGE" while the running slot is on trial
(it must commit within `+update.HealthTimeout.String()+` of the boot), or nothing.`,
		func(u *update.Updater) (string, error) {
			r, err := u.Settle()
			switch {
			case r.Failed:
				return "failed: " + r.Message(), err
			case r.Trying:
				return "trying: " + r.Message(), err
			}
			return "", err
		})
}

func newUpdateCommitCmd(g *globalFlags) *cobra.Command {
	return bootStepCmd(g, "commit", "Keep the running slot (clawedge-init runs it once the daemon is ready)", "",
		func(u *update.Updater) (string, error) {
			ok, err := u.Commit()
			if !ok {
				return "", err
			}
			return fmt.Sprintf("update committed: slot %s is now the default", strings.ToUpper(u.Current)), err
		})
}
