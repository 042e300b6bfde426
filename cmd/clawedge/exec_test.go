package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A chain that fails at stage two says what stage one did, as the console does,
// and the same with or without a daemon. Standalone exec used to print only the
// error, hiding that the LED had been switched on.
func TestExecChainFailureShowsStages(t *testing.T) {
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\n")
	line := `@gpio/write{pin="led";value=1}->@gpio/write{pin="led";value=$prev.nope}`
	want := "gpio/write: led = 1 (high)\ngpio/write: error: line 1, column 61: gpio/write: parameter \"value\": $prev.nope does not exist"
	standalone := runCLI(t, 1, "", "exec", "--config", cfgPath, line)
	if !strings.HasPrefix(standalone, want) || strings.Count(standalone, "error") != 1 {
		t.Errorf("standalone exec:\n%s\nwant it to start with:\n%s", standalone, want)
	}
	console := runCLI(t, 0, line+"\n", "chat", "--config", cfgPath)
	if strings.TrimSpace(console) != strings.TrimSpace(standalone) {
		t.Errorf("the console says:\n%s\nexec says:\n%s", console, standalone)
	}

	startDaemon(t, cfgPath, &lockedBuffer{})
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	if got := runCLI(t, 1, "", "exec", "--config", cfgPath, line); got != standalone {
		t.Errorf("through the daemon:\n%s\nwithout one:\n%s", got, standalone)
	}
}
