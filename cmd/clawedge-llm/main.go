//go:build llamacpp

// Command clawedge-llm runs one llama.cpp model for the clawedge core. The core
// starts it, talks to it over stdin/stdout in the framed protocol of package
// localmodel/wire, and restarts it if it dies: a model that runs out of memory
// kills this process, never the agent.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/clawedge/clawedge/localmodel/llama"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Fprintln(os.Stderr, "clawedge-llm: the llama.cpp runner of clawedge; it speaks localmodel/wire frames on stdin/stdout and is started by clawedge itself")
		os.Exit(2)
	}
	llama.Init(libDir(), os.Getenv("CLAWEDGE_LLM_VERBOSE") != "")
	s := newServer(os.Stdout)
	if err := s.serve(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "clawedge-llm:", err)
		os.Exit(1)
	}
}

// libDir is where the ggml CPU variants live: $CLAWEDGE_LLM_LIB, else
// ../lib beside the executable (the installed layout), else the dev folder.
func libDir() string {
	if d := os.Getenv("CLAWEDGE_LLM_LIB"); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err == nil {
		d := filepath.Join(filepath.Dir(exe), "..", "lib")
		if m, _ := filepath.Glob(filepath.Join(d, "libggml-cpu-*.so")); len(m) > 0 {
			return d
		}
		arch := map[string]string{"amd64": "linux-x64", "arm64": "linux-arm64"}[runtime.GOARCH]
		for dir := filepath.Dir(exe); dir != "/"; dir = filepath.Dir(dir) {
			d := filepath.Join(dir, "third_party", "llama", arch, "lib")
			if _, err := os.Stat(d); err == nil {
				return d
			}
		}
	}
	return "."
}
