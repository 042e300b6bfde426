//go:build llamacpp

// Command clawedge-llm runs one llama.cpp model for the clawedge core. The core
// starts it, talks to it over stdin/stdout in the framed protocol of package
// localmodel/wire, and restarts it if it dies: a model that runs out of memory
// kills this process, never the agent.
package main

import (
	"fmt"
	"os"

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

// libDir is where the ggml CPU variants live: $CLAWEDGE_LLM_LIB, else the
// folder libllama was loaded from (llama.LibDir: $ORIGIN/../lib installed, the
// dev folder in this repository).
func libDir() string { return os.Getenv("CLAWEDGE_LLM_LIB") }
