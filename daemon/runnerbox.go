package daemon

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/clawedge/clawedge/sandbox"
)

// ConfineRunner runs the local-model runner in the sandbox: it may read its
// own libraries and the model file, nothing else it would not need to start
// (not the store, not the device key), open no socket, and take no more
// address space than the board has memory (runnerMemoryMB). A malicious GGUF that takes over
// the C++ parser is held there. The runner keeps clawedge's uid: the model
// sits in data_dir, which nobody else may enter. It may write only beneath
// cacheDir ("": nowhere), where it keeps the prompt prefix's KV state.
// warn says what the sandbox could not apply.
func ConfineRunner(model, cacheDir string, warn func(string)) func(runner string, env []string) (*exec.Cmd, error) {
	box := &sandbox.Runner{AllowWithoutLandlock: true, Warn: warn}
	return func(runner string, env []string) (*exec.Cmd, error) {
		if real, err := filepath.EvalSymlinks(runner); err == nil {
			runner = real
		}
		read := []string{filepath.Dir(runner), "/proc/cpuinfo", "/proc/meminfo", "/sys/devices/system/cpu"}
		read = append(read, runpath(runner)...)
		if real, err := filepath.EvalSymlinks(model); err == nil {
			read = append(read, real)
		}
		var write []string
		if real, err := filepath.EvalSymlinks(cacheDir); cacheDir != "" && err == nil {
			write = append(write, real) // the sandbox grants real paths only
		}
		s := sandbox.Spec{Program: runner, Read: read, Write: write, UID: -1, GID: -1,
			Env:    append(passEnv("LD_LIBRARY_PATH", "GGML_", "LLAMA_"), env...),
			Limits: sandbox.Limits{MemoryMB: runnerMemoryMB(memTotalMB("/proc/meminfo")), NoFile: 256}}
		return box.Command(s)
	}
}

// runpath returns the directories of the runner's DT_RUNPATH (where its
// llama libraries are: $ORIGIN/../lib when installed, the source tree's
// third_party in a development build), found as the string that starts with
// $ORIGIN in the binary: reading it with debug/elf would add that package
// to the core for one string. Each is resolved, since Landlock grants the
// file a path leads to.
func runpath(runner string) []string {
	f, err := os.Open(runner)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 256<<20))
	if err != nil {
		return nil
	}
	i := bytes.Index(data, []byte("$ORIGIN/"))
	if i < 0 {
		return nil
	}
	end := bytes.IndexByte(data[i:], 0)
	if end < 0 {
		return nil
	}
	var dirs []string
	for _, d := range strings.Split(string(data[i:i+end]), ":") {
		d = strings.ReplaceAll(d, "$ORIGIN", filepath.Dir(runner))
		if real, err := filepath.EvalSymlinks(d); err == nil {
			dirs = append(dirs, real)
		}
	}
	return dirs
}

// passEnv keeps the variables of this process named exactly name or, for a
// name ending in "_", starting with it.
func passEnv(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		for _, n := range names {
			if k == n || strings.HasSuffix(n, "_") && strings.HasPrefix(k, n) {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}

// runnerMemoryMB is the runner's address-space limit: twice the board's
// memory, plus 1 GB for the address space the runner's Go runtime reserves
// without using (under 1 GB in all it does not start); 0 (none) when
// unknown. Twice, because llama.cpp reserves more than it touches (the
// output buffer is vocabulary × batch floats, 311 MB for Qwen2's 151,936
// tokens): with the board's memory alone, the tiny test model's context
// could not be made on a 1 GB Pi 3 (the SD image's boot test).
func runnerMemoryMB(total int) int {
	if total == 0 {
		return 0
	}
	return 2*total + 1024
}

// memTotalMB is the board's memory in MB, 0 (no limit) when unknown.
func memTotalMB(meminfo string) int {
	data, err := os.ReadFile(meminfo)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			var kb int
			for _, c := range strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")) {
				if c < '0' || c > '9' {
					break
				}
				kb = kb*10 + int(c-'0')
			}
			return kb / 1024
		}
	}
	return 0
}
