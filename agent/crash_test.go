package agent

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawedge/clawedge/agent/agenttest"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// effectTool appends a line to a file: an effect that outlives the process.
type effectTool struct {
	path string
	// killAfter kills the process right after the effect, before the outcome.
	killAfter bool
}

func (e effectTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "test/effect", Doc: "Do something that cannot be undone."}
}

func (e effectTool) Run(context.Context, grammar.Args) (tools.Result, error) {
	f, err := os.OpenFile(e.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return tools.Result{}, err
	}
	f.WriteString("effect\n")
	f.Sync()
	f.Close()
	if e.killAfter {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	return tools.Result{Text: "done"}, nil
}

// TestCrashHelper is the process that gets killed; it only runs under TestRestartMidTurn.
func TestCrashHelper(t *testing.T) {
	dir, mode := os.Getenv("AGENT_CRASH_DIR"), os.Getenv("AGENT_CRASH_MODE")
	if dir == "" {
		t.Skip("helper process for TestRestartMidTurn")
	}
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	reg.Register(effectTool{path: filepath.Join(dir, "effects"), killAfter: mode == "after-effect"})
	p := agenttest.New(agenttest.Step{Text: qwenCall("test/effect", `{}`)}, agenttest.Step{Text: "Done."})
	ag, err := New(Options{Provider: p, Runner: &tools.Runner{Registry: reg, Audit: st}, Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if mode == "before-effect" {
		ag.hook = func(point string) {
			if point == "after-intent" { // the intent is committed; the effect is next
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	ag.Turn(context.Background(), In{Channel: console, User: user, Text: "do the irreversible thing"})
	t.Fatal("the helper was not killed")
}

func TestRestartMidTurn(t *testing.T) {
	for _, mode := range []string{"before-effect", "after-effect"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCrashHelper$", "-test.count=1")
			cmd.Env = append(os.Environ(), "AGENT_CRASH_DIR="+dir, "AGENT_CRASH_MODE="+mode)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("helper did not die by SIGKILL: %v\n%s", err, out)
			}
			effects := func() int {
				b, _ := os.ReadFile(filepath.Join(dir, "effects"))
				return strings.Count(string(b), "effect\n")
			}
			want := map[string]int{"before-effect": 0, "after-effect": 1}[mode]
			if n := effects(); n != want {
				t.Fatalf("%d effects before the restart, want %d", n, want)
			}

			// The restart: what `clawedge run` does before serving.
			st, err := store.Open(dir, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if n, err := st.Interrupted(); err != nil || n != 1 {
				t.Fatalf("interrupted intents: %d %v", n, err)
			}
			reg := tools.NewRegistry()
			reg.Register(effectTool{path: filepath.Join(dir, "effects")})
			// The model, asked again, would call the tool again: it must not get the chance
			// for the old turn, and the new turn's call is a new, audited request.
			p := agenttest.New(agenttest.Step{Text: "Hello again."})
			ag, err := New(Options{Provider: p, Runner: &tools.Runner{Registry: reg, Audit: st}, Store: st})
			if err != nil {
				t.Fatal(err)
			}
			notices, err := ag.Recover()
			if err != nil || len(notices) != 1 {
				t.Fatalf("notices %v %v", notices, err)
			}
			res, err := ag.Turn(context.Background(), In{Channel: console, User: user, Text: "hello"})
			if err != nil {
				t.Fatal(err)
			}
			wantNote := `Note: clawedge restarted while handling your previous request ("do the irreversible thing"); it was interrupted after starting @test/effect{}, whose effect is unknown. It was not repeated.`
			if !strings.HasPrefix(res.Text, wantNote) || !strings.HasSuffix(res.Text, "Hello again.") {
				t.Errorf("answer:\n%s\nwant it to start with:\n%s", res.Text, wantNote)
			}
			if n := effects(); n != want {
				t.Errorf("%d effects after the restart, want %d: an effect ran twice", n, want)
			}
			es, _ := st.Tail(10)
			if len(es) != 1 || !es[0].Interrupted {
				t.Errorf("audit: %v", es)
			}
			// Told once only.
			p.Add(agenttest.Step{Text: "Yes."})
			if res, _ := ag.Turn(context.Background(), In{Channel: console, User: user, Text: "ok?"}); res.Text != "Yes." {
				t.Errorf("second answer %q", res.Text)
			}
		})
	}
}
