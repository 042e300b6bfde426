package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

func TestChatExitAndQuit(t *testing.T) {
	cfgPath, _ := writeConfig(t, "")
	for _, word := range []string{"exit", "quit", "EXIT"} {
		out := runCLI(t, 0, "@gpio/read{pin=\"led\"}\n"+word+"\n@gpio/write{pin=\"led\";value=1}\n", "chat", "--config", cfgPath)
		if !strings.Contains(out, "led = 0") || strings.Contains(out, "led = 1") {
			t.Errorf("%s: the lines after it were answered, or the ones before not:\n%s", word, out)
		}
	}
}

// TestChatPipedFailedTurn: a script piping lines into chat learns from the
// exit status that a model turn failed; failed commands keep exit 0, as
// before (they are answers, not breakage).
func TestChatPipedFailedTurn(t *testing.T) {
	srv := openaitest.New(t)
	cfgPath, _ := writeConfig(t, fmt.Sprintf("models:\n  remote:\n    - {name: lan, kind: openai, base_url: %q, model: m}\n", srv.URL))
	srv.Push(openaitest.Text("Hello."))
	if out := runCLI(t, 0, "hello\n@gpio/read{pin=\"nope\"}\n", "chat", "--config", cfgPath); !strings.Contains(out, "Hello.") {
		t.Errorf("a good turn:\n%s", out)
	}
	srv.Push(openaitest.Reply{Status: 401, Message: "bad key"})
	if out := runCLI(t, 1, "hello\n", "chat", "--config", cfgPath); !strings.Contains(out, "401") || !strings.Contains(out, "a model turn failed") {
		t.Errorf("a failed turn:\n%s", out)
	}
	// A server that cannot take the request as it was started: what it said, how
	// to fix it, and exit 1.
	srv.Push(openaitest.Error(500, "tools param requires --jinja flag"))
	if out := runCLI(t, 1, "hello\n", "chat", "--config", cfgPath); !strings.Contains(out, "tools param requires --jinja flag") ||
		!strings.Contains(out, "start llama-server with --jinja") || !strings.Contains(out, "a model turn failed") {
		t.Errorf("a refused request:\n%s", out)
	}
	// Every request carried the config's sampling: the default temperature.
	for _, r := range srv.Requests() {
		if r.Body.Temperature == nil || *r.Body.Temperature != 0.7 || r.Body.Seed != nil {
			t.Errorf("sampling: %s", r.Raw)
		}
	}
}

// TestHelpListsTheTools: the console's help and clawedge tools name the same
// tools.
func TestHelpListsTheTools(t *testing.T) {
	cfgPath, _ := writeConfig(t, "")
	names := func(out string) []string {
		var n []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "@") {
				n = append(n, strings.Fields(line)[0])
			}
		}
		return n
	}
	help := names(runCLI(t, 0, "help\n", "chat", "--config", cfgPath))
	listed := names(runCLI(t, 0, "", "tools", "--config", cfgPath))
	if strings.Join(help, " ") != strings.Join(listed, " ") || len(help) < 5 {
		t.Errorf("help lists %v\nclawedge tools lists %v", help, listed)
	}
}

// TestRunConsoleCtrlD: at run's console on a terminal, exit and Ctrl-D say
// how to stop the daemon, which keeps running until SIGINT.
func TestRunConsoleCtrlD(t *testing.T) {
	cfgPath, _ := writeConfig(t, "console: {stdin: true}\n")
	cmd := exec.Command(binPath, "run", "--config", cfgPath, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	term := startTerminal(t, cmd)
	term.expect("> ")
	term.answer("", "exit")
	term.expect(daemon.RunStopHint)
	term.tty.Write([]byte{4}) // Ctrl-D at the start of a line: end of input
	term.expect("The console is closed (Ctrl-D). " + daemon.RunStopHint)
	select {
	case <-term.done:
		t.Fatalf("the daemon stopped at Ctrl-D:\n%s", term.output())
	default:
	}
	cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil {
		t.Errorf("run after SIGINT: %v\n%s", err, term.output())
	}
}

// TestChatLineEditing: chat at a terminal edits the line in place and brings
// earlier lines back with the up arrow, and leaves the terminal as it found it.
func TestChatLineEditing(t *testing.T) {
	cfgPath, _ := writeConfig(t, "")
	cmd := exec.Command(binPath, "chat", "--config", cfgPath)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	term := startTerminal(t, cmd)
	term.expect("> ")
	term.answer("", `@gpio/write{pin="led";value=1}`)
	term.expect("led = 1")
	term.expect("> ")
	term.answer("", "@gpio/read{pin=\"lex\x7fd\"}") // a typo, backspace, the fix
	term.expect("led = 1 (high)")
	term.expect("> ")
	// Up twice: the write again; left twice, Delete, 0: value=0.
	term.answer("", "\x1b[A\x1b[A\x1b[D\x1b[D\x1b[3~0")
	term.expect("led = 0")
	term.expect("> ")
	term.answer("", "\x1b[A") // up once: the line just run
	term.expect("led = 0")
	term.expect("> ")
	term.tty.Write([]byte{4}) // Ctrl-D on an empty line
	<-term.done
	if err := cmd.Wait(); err != nil {
		t.Fatalf("chat: %v\n%s", err, term.output())
	}
	if tio, err := unix.IoctlGetTermios(int(term.tty.Fd()), unix.TCGETS); err != nil || tio.Lflag&(unix.ECHO|unix.ICANON) != unix.ECHO|unix.ICANON {
		t.Errorf("the terminal was left in raw mode: %+v %v", tio, err)
	}
}
