package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

func remoteConfig(srv *openaitest.Server, extra string) string {
	return fmt.Sprintf("models:\n  remote:\n    - {name: lan, kind: openai, base_url: %q, model: qwen2.5:7b}\n%s", srv.URL, extra)
}

// Free text in `clawedge chat` goes to the agent, whose call switches the LED; the
// command after it runs after the answer; status shows the session and the model.
func TestChatAgentRemote(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.ToolCall("gpio/write", `{"pin": "led", "value": 1}`), openaitest.Text("The LED ", "is on."))
	cfgPath, _ := writeConfig(t, remoteConfig(srv, ""))
	out := runCLI(t, 0, "turn on the led\n@gpio/read{pin=\"led\"}\n", "chat", "--config", cfgPath)
	if out != "The LED is on.\nled = 1 (high)\n" {
		t.Fatalf("output %q", out)
	}
	if audit := runCLI(t, 0, "", "audit", "--config", cfgPath); !strings.Contains(audit, `console/stdin`) || !strings.Contains(audit, `@gpio/write{pin="led";value=1} -> ok`) {
		t.Errorf("audit:\n%s", audit)
	}
	// The model steps, recorded before their calls ran.
	steps := strings.Split(strings.TrimSpace(runCLI(t, 0, "", "audit", "--steps", "--config", cfgPath)), "\n")
	if len(steps) != 2 || !strings.Contains(steps[0], "turn 1 step 1 lan/qwen2.5:7b (local-first: remote lan)") ||
		!strings.Contains(steps[0], "-> calls gpio/write:") || !strings.Contains(steps[1], `"The LED is on."`) {
		t.Errorf("steps:\n%s", strings.Join(steps, "\n"))
	}
	var st daemon.StatusReport
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "status", "--json", "--config", cfgPath)), &st); err != nil {
		t.Fatal(err)
	}
	if st.Daemon || len(st.Sessions) != 1 || st.Sessions[0].Channel != "console/stdin" || st.Sessions[0].State != "IDLE" ||
		st.Sessions[0].Turns != 1 || st.Sessions[0].LastStop != "answered" {
		t.Errorf("sessions %+v", st.Sessions)
	}
	if len(st.Models) != 1 || st.Models[0].Name != "lan" || st.Models[0].Calls != 2 || st.Models[0].TokensIn != 20 {
		t.Errorf("models %+v", st.Models)
	}
}

var approvalLine = regexp.MustCompile(`Approval needed \[([0-9a-f]+)\]`)

// approvalChat is a `clawedge chat` through the daemon that has sent one message
// and read up to the approval it led to.
type approvalChat struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	seen strings.Builder // everything chat printed so far
	id   string          // the approval's id
}

// chatToApproval starts chat, says message and reads until an approval is asked.
func chatToApproval(t *testing.T, cfgPath, message string, dout *lockedBuffer) *approvalChat {
	t.Helper()
	c := &approvalChat{cmd: exec.Command(binPath, "chat", "--config", cfgPath)}
	c.cmd.Dir = t.TempDir()
	c.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+c.cmd.Dir)
	c.in, _ = c.cmd.StdinPipe()
	stdout, _ := c.cmd.StdoutPipe()
	c.cmd.Stderr = os.Stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill() })
	io.WriteString(c.in, message+"\n")
	c.out = bufio.NewReader(stdout)
	deadline := time.AfterFunc(20*time.Second, func() { c.cmd.Process.Kill() })
	defer deadline.Stop()
	for c.id == "" {
		line, err := c.out.ReadString('\n')
		c.seen.WriteString(line)
		if err != nil {
			t.Fatalf("%v; chat said:\n%s\ndaemon:\n%s", err, c.seen.String(), dout.String())
		}
		if m := approvalLine.FindStringSubmatch(line); m != nil {
			c.id = m[1]
		}
	}
	return c
}

// approve approves, ends the input and reads what chat says until it exits.
func (c *approvalChat) approve(t *testing.T) {
	t.Helper()
	io.WriteString(c.in, "approve "+c.id+"\n")
	c.in.Close()
	rest, _ := io.ReadAll(c.out)
	c.seen.Write(rest)
	if err := c.cmd.Wait(); err != nil {
		t.Fatalf("chat: %v\n%s", err, c.seen.String())
	}
}

// The daemon asks before switching the LED; the person in `clawedge chat` (through
// the control socket) sees the request streamed, approves it in the same chat, and
// `clawedge status` shows the wait and the totals.
func TestDaemonAgentApproval(t *testing.T) {
	srv := openaitest.New(t)
	srv.Push(openaitest.ToolCall("gpio/write", `{"pin": "led", "value": 1}`), openaitest.Text("The LED is on."))
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\npolicy:\n  tools: {gpio/write: ask}\n"+remoteConfig(srv, ""))
	var dout lockedBuffer
	d := startDaemon(t, cfgPath, &dout)
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))

	chat := chatToApproval(t, cfgPath, "turn on the led", &dout)
	var st daemon.StatusReport
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "status", "--json", "--config", cfgPath)), &st); err != nil {
		t.Fatal(err)
	}
	if !st.Daemon || len(st.Approvals) != 1 || st.Approvals[0].ID != chat.id || len(st.Sessions) != 1 || st.Sessions[0].State != "NEEDS_APPROVAL" {
		t.Errorf("status while waiting: %+v", st)
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 0") {
		t.Errorf("the LED moved before approval: %s", out)
	}
	chat.approve(t)
	for _, want := range []string{"Approved: @gpio/write{pin=\"led\";value=1}", "The LED is on.", "was approved.)"} {
		if !strings.Contains(chat.seen.String(), want) {
			t.Errorf("chat lacks %q:\n%s", want, chat.seen.String())
		}
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 1") {
		t.Errorf("not switched after approval: %s", out)
	}
	if steps := runCLI(t, 0, "", "audit", "--steps", "--config", cfgPath); strings.Count(steps, "\n") != 2 || !strings.Contains(steps, "control") {
		t.Errorf("steps through the daemon:\n%s", steps)
	}
	text := runCLI(t, 0, "", "status", "--config", cfgPath)
	for _, want := range []string{"daemon running", "Models (strategy local-first):", "lan", "control", "IDLE", "answered"} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}
	if err := d.term(t); err != nil {
		t.Errorf("daemon: %v\n%s", err, dout.String())
	}
}

// Telegram: free text goes to the agent; the policy asks before gpio calls on this
// channel, with Telegram's buttons in the chat; the owner presses Approve; the call
// runs, audited as the Telegram user's; the answer says it was approved.
func TestTelegramAgentApproval(t *testing.T) {
	tg := telegramtest.New(t)
	model := openaitest.New(t)
	model.Push(openaitest.ToolCall("gpio/write", `{"pin": "led", "value": 1}`), openaitest.Text("The LED is on."))
	owner := telegramtest.User{ID: 42, FirstName: "O", Username: "olga"}
	cfgPath, _ := writeConfig(t, telegramConfig(tg, []int64{owner.ID}, "")+
		"policy:\n  channels:\n    telegram: {\"gpio/*\": ask}\n"+remoteConfig(model, ""))
	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	tg.Text(owner, nil, "turn on the led please")

	var data string
	var msgID int64
	tg.Wait(t, 15*time.Second, "approval buttons", func() bool {
		n := int64(0)
		for _, c := range tg.Calls("sendMessage") {
			if c.Int("chat_id") != owner.ID {
				continue
			}
			n++
			if m := regexp.MustCompile(`"callback_data":"(ap:[0-9a-f]+:y)"`).FindSubmatch(c.Raw); m != nil {
				data, msgID = string(m[1]), n
				return true
			}
		}
		return false
	})
	if got := tg.Sent(owner.ID)[msgID-1]; !strings.Contains(got, `@gpio/write{pin="led";value=1}`) {
		t.Errorf("approval message %q", got)
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 0") {
		t.Errorf("the LED moved before approval: %s", out)
	}
	tg.Press(owner, owner.ID, msgID, data)
	reply := unescape(waitSent(t, tg, owner.ID, int(msgID)+1, out))
	if !strings.Contains(reply, "The LED is on.") || !strings.Contains(reply, "was approved.") {
		t.Errorf("reply %q", reply)
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 1") {
		t.Errorf("not switched after approval: %s", out)
	}
	audit := runCLI(t, 0, "", "audit", "--config", cfgPath)
	if !strings.Contains(audit, `telegram/telegram:42 (@olga) @gpio/write{pin="led";value=1} -> ok`) {
		t.Errorf("audit:\n%s", audit)
	}
	if err := d.term(t); err != nil {
		t.Errorf("daemon: %v\n%s", err, out)
	}
}

// The daemon is killed while the agent's call runs (its intent recorded, the effect
// under way); after the restart the call is not run again and the person is told at
// their next message.
func TestDaemonKilledMidTurn(t *testing.T) {
	model := openaitest.New(t)
	model.Push(openaitest.ToolCall("gpio/pulse", `{"pin": "led", "ms": 60000}`))
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\n"+remoteConfig(model, ""))
	out := &lockedBuffer{}
	d := startDaemon(t, cfgPath, out)
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))

	chat := exec.Command(binPath, "chat", "--config", cfgPath)
	chat.Dir = t.TempDir()
	chat.Env = append(os.Environ(), "XDG_CONFIG_HOME="+chat.Dir)
	chat.Stdin = strings.NewReader("pulse the led for a minute\n")
	if err := chat.Start(); err != nil {
		t.Fatal(err)
	}
	defer chat.Process.Kill()
	// The pulse has started once its intent is in the audit trail without an outcome.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(runCLI(t, 0, "", "exec", "--config", cfgPath, "@sys/audit{}"), `@gpio/pulse{pin="led";ms=60000} -> (pending)`) {
		if time.Now().After(deadline) {
			t.Fatalf("the pulse did not start:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	d.kill()
	chat.Wait()

	model.Push(openaitest.Text("Hello."))
	d = startDaemon(t, cfgPath, out)
	for deadline := time.Now().Add(30 * time.Second); strings.Count(out.String(), "clawedge ready") < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not restart:\n%s", out)
		}
	}
	reply := runCLI(t, 0, "hello\n", "chat", "--config", cfgPath)
	want := `Note: clawedge restarted while handling your previous request ("pulse the led for a minute"); it was interrupted after starting @gpio/pulse{pin="led";ms=60000}, whose effect is unknown. It was not repeated.`
	if !strings.HasPrefix(reply, want) || !strings.HasSuffix(reply, "Hello.\n") {
		t.Errorf("reply:\n%s\nwant it to start with:\n%s", reply, want)
	}
	if n := len(model.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2: the interrupted turn must not be asked again", n)
	}
	audit := runCLI(t, 0, "", "exec", "--config", cfgPath, "@sys/audit{}")
	if n := len(regexp.MustCompile(`(?m)^#\d+ \S+ [^@]*@gpio/pulse\{pin="led";ms=60000\} -> interrupted`).FindAllString(audit, -1)); n != 1 ||
		len(regexp.MustCompile(`(?m)^#\d+ \S+ [^@]*@gpio/pulse`).FindAllString(audit, -1)) != 1 {
		t.Errorf("audit:\n%s", audit)
	}
	if !strings.Contains(out.String(), "a turn was interrupted by the last stop") {
		t.Errorf("the restart did not log the interrupted turn:\n%s", out)
	}
	if err := d.term(t); err != nil {
		t.Errorf("daemon: %v", err)
	}
}
