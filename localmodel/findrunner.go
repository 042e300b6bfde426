package localmodel

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// RunnerName is the file name of the local-model runner.
const RunnerName = "clawedge-llm"

// FindRunner returns the path of the runner: clawedge-llm beside the running
// executable (bin/ of the installed layout, bin/ of `make`), else on PATH.
func FindRunner() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	return findRunner(exe, exec.LookPath)
}

func findRunner(exe string, lookPath func(string) (string, error)) (string, error) {
	var beside string
	if exe != "" {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
		beside = filepath.Join(filepath.Dir(exe), RunnerName)
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return beside, nil
		}
	}
	if p, err := lookPath(RunnerName); err == nil {
		return p, nil
	} else if !errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("local model runner: %w", err)
	}
	where := "on PATH"
	if beside != "" {
		where = fmt.Sprintf("at %s nor on PATH", beside)
	}
	return "", fmt.Errorf("local model runner %s not found %s (it is built by `make` and shipped in the amd64 and arm64 releases; 32-bit ARM has none: use a remote model)", RunnerName, where)
}
