package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawedge/clawedge/config"
)

// reportConfig says on the console, once at boot, what the config clawedge
// will run with asks of the network and the model, and whether the board
// has it: the lines a person at the serial console needs before anything
// else works. (The IP address and the clock have their own lines, from
// DHCP and NTP, when they happen.)
func reportConfig(cfgPath string) {
	c, err := config.Load(cfgPath)
	if err != nil {
		return // pickConfig has already said why
	}
	if nets := wifiNetworks(c.Network); len(nets) > 0 {
		startWifi(nets) // says whether there is a radio once its firmware had time to come up
	} else {
		logf("%s", wifiStatus(nets, wifiInterfaces("/sys/class/net")))
	}
	logf("%s", modelStatus(c.Models.Local, filepath.Join(bootDir, "models")))
}

// modelStatus is the console line about the local model: the file named in
// models.local and its size, or why there is none.
func modelStatus(l *config.LocalModel, bootModels string) string {
	if l == nil {
		found, _ := filepath.Glob(filepath.Join(bootModels, "*.gguf"))
		if len(found) > 0 {
			return fmt.Sprintf("model: none configured, but %s is on the boot partition: name it in models.local.path", found[0])
		}
		return "model: none configured (models.local in clawedge.yaml; see models/README.txt on the boot partition)"
	}
	fi, err := os.Stat(l.Path)
	if err != nil {
		return fmt.Sprintf("model: %s is missing: %v", l.Path, err)
	}
	return fmt.Sprintf("model: %s (%d MiB), loaded at the first message", l.Path, fi.Size()>>20)
}
