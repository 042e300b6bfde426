package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/localmodel"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// LocalModel are doctor's findings on models.local: the runner starts
// and loads its libraries, and the model file is a model that fits in the
// memory available now. Nothing is loaded: the runner only says its version.
func LocalModel(m *config.LocalModel, findRunner func() (string, error), meminfo string) []Check {
	return []Check{Runner(findRunner), ModelFile(m, meminfo)}
}

const runnerFix = "build it with make (bin/clawedge-llm beside bin/clawedge), or install the clawedge-llm package; " +
	"32-bit ARM has no runner: use a remote model (docs/remote-models.md)"

func Runner(findRunner func() (string, error)) Check {
	c := Check{What: "local model runner"}
	path, err := findRunner()
	if err != nil {
		c.Info, c.Fix = err.Error(), runnerFix
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	// Only what the runner needs to start: the config's secrets live in the
	// environment and never reach a child process.
	cmd.Env = keepEnv(os.Environ(), "PATH", "LANG", "CLAWEDGE_LLM_LIB")
	out, err := cmd.CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		c.Info = fmt.Sprintf("%s --version: %v", path, err)
		if text != "" {
			c.Info += ": " + firstLine(text)
		}
		switch {
		case strings.Contains(text, "error while loading shared libraries"):
			c.Fix = "its llama.cpp libraries (libllama.so, libggml*.so) must be in ../lib or ../lib/clawedge beside it: " +
				"reinstall the clawedge-llm package, or run make runner in the source tree"
		case strings.Contains(text, "no ggml backend"):
			c.Fix = "libggml-cpu-*.so must lie beside libllama.so (or in $CLAWEDGE_LLM_LIB): reinstall the clawedge-llm package"
		default:
			c.Fix = runnerFix
		}
		return c
	}
	c.OK, c.Info = true, firstLine(text)
	return c
}

func ModelFile(m *config.LocalModel, meminfo string) Check {
	c := Check{What: "local model"}
	client, err := localmodel.New(localmodel.Options{Model: m.Path, Context: m.Context, Template: m.Template, MemInfo: meminfo})
	if err != nil {
		c.Info = err.Error()
		c.Fix = "download a model with clawedge model pull (clawedge model list shows what fits), or correct models.local.path"
		if strings.Contains(err.Error(), "template") {
			c.Fix = "set models.local.template to qwen2, qwen2.5 or qwen3"
		}
		return c
	}
	defer client.Close()
	var me *localmodel.MemoryError
	if err := client.CheckMemory(); errors.As(err, &me) {
		c.Info = err.Error()
		c.Fix = "pull a smaller model (clawedge model list), lower models.local.context, or stop what holds the memory"
		return c
	} else if err != nil {
		c.Info, c.Fix = err.Error(), "correct models.local"
		return c
	}
	st, err := os.Stat(m.Path)
	if err != nil {
		c.Info = err.Error()
		return c
	}
	c.OK, c.Info = true, fmt.Sprintf("%s (%s), fits in the memory available", m.Path, modelfiles.FormatBytes(st.Size()))
	return c
}

// keepEnv is env with only the named variables.
func keepEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		for _, n := range names {
			if name == n {
				out = append(out, kv)
			}
		}
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
