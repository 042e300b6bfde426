//go:build llamacpp

// Command clawedge-llm runs one llama.cpp model for the clawedge core. The core
// starts it, talks to it over stdin/stdout in the framed protocol of package
// localmodel/wire, and restarts it if it dies: a model that runs out of memory
// kills this process, never the agent.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/clawedge/clawedge/localmodel/llama"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "-h" || os.Args[1] == "--help") {
		fmt.Fprintln(os.Stderr, "clawedge-llm: the llama.cpp runner of clawedge; it speaks localmodel/wire frames on stdin/stdout and is started by clawedge itself")
		os.Exit(2)
	}
	llama.Init(libDir(), os.Getenv("CLAWEDGE_LLM_VERBOSE") != "")
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		os.Exit(printVersion())
	}
	s := newServer(os.Stdout)
	if err := s.serve(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "clawedge-llm:", err)
		os.Exit(1)
	}
}

// printVersion says which runner this is and what it loaded: clawedge
// doctor runs it to learn that the runner starts (its shared libraries are
// found) and can compute (a ggml CPU backend is loaded). 1 when it cannot.
func printVersion() int {
	rev := ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				rev = " " + s.Value[:12]
			}
		}
	}
	dir := libDir()
	if dir == "" {
		dir = llama.LibDir()
	}
	fmt.Printf("clawedge-llm%s %s/%s, libraries in %s\n", rev, runtime.GOOS, runtime.GOARCH, dir)
	backends := llama.Backends()
	if len(backends) == 0 {
		fmt.Fprintf(os.Stderr, "clawedge-llm: no ggml backend loaded: libggml-cpu-*.so is missing from %s\n", dir)
		return 1
	}
	for _, b := range backends {
		fmt.Println("backend", b)
	}
	return 0
}

// libDir is where the ggml CPU variants live: $CLAWEDGE_LLM_LIB, else the
// folder libllama was loaded from (llama.LibDir: $ORIGIN/../lib installed, the
// dev folder in this repository).
func libDir() string { return os.Getenv("CLAWEDGE_LLM_LIB") }
