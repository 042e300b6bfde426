// Command clawedge-init is PID 1 of the clawedge SD card image: it mounts the
// file systems, brings up the network, picks the config, and runs
// `clawedge run` for as long as the board is on, restarting it with backoff.
//
// The image's root is a read-only squashfs; everything that changes lives on
// the ext4 /perm partition (the store, the config, models), and the FAT boot
// partition is mounted read-only at /boot so that a clawedge.yaml written
// there from any PC is picked up at the next boot. There is no shell, no
// login and no package manager: the board does one thing.
//
// Signals: SIGTERM or SIGINT (also Ctrl-Alt-Del) reboot, SIGUSR2 or SIGPWR
// power off; either way clawedge is stopped first so its outputs return to
// their safe levels, and /perm is synced and remounted read-only.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/clawedge/clawedge/update"
)

// Paths of the image (image/mkimage builds the root file system to match).
const (
	clawedgeBin   = "/usr/bin/clawedge"
	defaultConfig = "/etc/clawedge/config.yaml"
	bootDir       = "/boot"
	permDir       = "/perm"
	stateDir      = "/perm/clawedge" // the daemon's working directory: relative data_dir lands here
	bootConfig    = "/boot/clawedge.yaml"
	permConfig    = "/perm/clawedge/config.yaml"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "clawedge-init: "+format+"\n", args...)
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-q" && os.Args[2] == "--" {
		os.Exit(modprobeHelper(os.Args[3])) // the kernel's request_module (modules.go)
	}
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "clawedge-init is the init process of the clawedge image (PID 1); it is not meant to be run by hand")
		os.Exit(2)
	}
	defer func() {
		// PID 1 must never exit: the kernel would panic. Reboot instead.
		if r := recover(); r != nil {
			logf("panic: %v; rebooting in 10s", r)
			time.Sleep(10 * time.Second)
			halt(syscall.LINUX_REBOOT_CMD_RESTART)
		}
	}()
	start := time.Now()
	// Ctrl-Alt-Del becomes SIGINT to us instead of an immediate reset.
	syscall.Reboot(syscall.LINUX_REBOOT_CMD_CAD_OFF)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGUSR2, syscall.SIGPWR)

	mountEarly()
	quietConsole()
	syscall.Sethostname([]byte("clawedge"))
	mountDisks()
	restoreClock()
	logf("%s", loadWifiModules(modulesRoot))
	upNetwork()
	cfg := pickConfig()
	upd := updateAtBoot(cfg) // update.go: settle the last A/B update, install one dropped on /boot
	takeWorkspace(cfg)       // workspace.go: SOUL.md, USER.md, MEMORY.md dropped on /boot
	if err := ownState(stateDir); err != nil {
		logf("giving %s to %s: %v", stateDir, appUser, err)
	}
	logf("%d devices (GPIO, UARTs, I2C) for %s", grantDevices("/dev"), appUser)
	reportConfig(cfg)
	logf("system up in %v; starting clawedge with %s as %s (uid %d)", time.Since(start).Round(time.Millisecond), cfg, appUser, appUID)

	r := startReaper()
	s := &supervisor{reaper: r, argv: []string{clawedgeBin, "run", "--config", cfg}, dir: stateDir,
		cred: appCredential(), env: []string{"PATH=/usr/bin:/bin", "HOME=" + stateDir, "USER=" + appUser, "TERM=vt100"}}
	s.env = append(s.env, upd.start(r, s, cfg)...)              // the notify socket: READY=1 commits, update URL requests
	s.env = append(s.env, update.SetupConfigEnv+"="+permConfig) // env.go: where the setup page writes
	s.env = append(s.env, envBeside(cfg)...)                    // env.go: the secrets setup wrote
	go s.run()
	go saveClockEvery(10 * time.Minute)

	sig := <-sigs
	cmd, what := syscall.LINUX_REBOOT_CMD_RESTART, "reboot"
	if sig == syscall.SIGUSR2 || sig == syscall.SIGPWR {
		cmd, what = syscall.LINUX_REBOOT_CMD_POWER_OFF, "power off"
	}
	logf("%v: %s", sig, what)
	s.stop(10 * time.Second)
	shutdown(cmd)
}
