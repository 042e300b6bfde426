package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clawedge/clawedge/channels/telegram/telegramtest"
	"github.com/clawedge/clawedge/goals"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/store"
)

// goalModel answers the goal runtime's two questions: plans with plan, and
// judgements with the score in *score.
func goalModel(srv *openaitest.Server, plan string, score *atomic.Int32) {
	srv.Default(func(r openaitest.Request) openaitest.Reply {
		if len(r.Body.Messages) > 0 && r.Body.Messages[0].Content != nil && strings.HasPrefix(*r.Body.Messages[0].Content, "You judge") {
			return openaitest.Text(fmt.Sprintf(`@goal/score{score=%d;reason="as scripted"}`, score.Load()))
		}
		return openaitest.Text(plan)
	})
}

// startGoalDaemon runs `clawedge run` until the test ends (SIGTERM, then wait);
// its log is returned as it grows.
func startGoalDaemon(t *testing.T, cfgPath, dataDir string) *bytes.Buffer {
	t.Helper()
	cmd := exec.Command(binPath, "run", "--config", cfgPath)
	var log bytes.Buffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	waitForSocket(t, filepath.Join(dataDir, "clawedge.sock"))
	return &log
}

// waitGoal polls `clawedge goal show ID --json` until its state is want.
func waitGoal(t *testing.T, cfgPath, id string, want goals.State) goals.Goal {
	t.Helper()
	g := pollGoal(t, cfgPath, id, 20*time.Second, func(g goals.Goal) bool { return g.State == want || g.State.Finished() })
	if g.State != want {
		t.Fatalf("goal %s is %s, want %s\n%s", id, g.State, want, goals.Show(g))
	}
	return g
}

// pollGoal polls `clawedge goal show ID --json` until ready says the goal
// is as the test waits for it, and fails the test after within.
func pollGoal(t *testing.T, cfgPath, id string, within time.Duration, ready func(goals.Goal) bool) goals.Goal {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var g goals.Goal
		out := runCLI(t, 0, "", "goal", "show", id, "--json", "--config", cfgPath)
		if err := json.Unmarshal([]byte(out), &g); err != nil {
			t.Fatalf("goal show --json: %v\n%s", err, out)
		}
		if ready(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("goal %s, after %s:\n%s", id, within, goals.Show(g))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestGoalCLI: the built daemon pursues a goal set with `clawedge goal add
// --until` to done when its pin reads high; `/goal TEXT` in chat sets one as
// the person at the console; list --json, show and cancel work through the
// control socket.
func TestGoalCLI(t *testing.T) {
	srv := openaitest.New(t)
	var score atomic.Int32
	goalModel(srv, `@gpio/write{pin="led";value=1}`, &score)
	cfgPath, dataDir := writeConfig(t, "console: {stdin: false}\ngoals: {poll: 50ms}\n"+remoteConfig(srv, ""))
	startGoalDaemon(t, cfgPath, dataDir)

	out := runCLI(t, 0, "", "goal", "add", "switch the led on", "--until", `@gpio/read{pin="led"} is high`, "--deadline", "1h", "--steps", "5", "--config", cfgPath)
	if !strings.Contains(out, "goal 1 set: switch the led on; until @gpio/read{pin=\"led\"} is high; deadline") {
		t.Errorf("goal add: %s", out)
	}
	g := waitGoal(t, cfgPath, "1", goals.Done)
	if len(g.Steps) != 1 || g.Steps[0].State != goals.StepDone || g.Deadline.IsZero() || !strings.HasPrefix(g.Owner.User, "uid:") ||
		g.Budget.Steps != 5 || g.Budget.Tokens != 20000 {
		t.Errorf("goal 1:\n%s", goals.Show(g))
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfgPath, `@gpio/read{pin="led"}`); !strings.Contains(out, "led = 1") {
		t.Errorf("the goal's step did not switch the daemon's led: %s", out)
	}

	// A goal the model plans to wait an hour for: set in chat, then cancelled.
	goalModel(srv, `@goal/wait{seconds=3600}`, &score)
	if out := runCLI(t, 0, "/goal keep \"calm\" for an hour\n", "chat", "--config", cfgPath); !strings.Contains(out, `goal 2 set: keep "calm" for an hour`) {
		t.Errorf("/goal in chat: %s", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := runCLI(t, 0, "", "goal", "show", "2", "--config", cfgPath)
		if strings.Contains(out, "[waiting: time] @goal/wait{seconds=3600}") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goal 2 never waited:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out := runCLI(t, 0, "", "status", "--config", cfgPath); !strings.Contains(out, "Goals being pursued") || !strings.Contains(out, `2 active: keep "calm" for an hour (0/1 steps`) || strings.Contains(out, "1 done") {
		t.Errorf("status does not show the goal being pursued (and only it):\n%s", out)
	}
	var list []struct {
		ID, Objective, State string
		Owner                struct{ User string }
		Steps                []struct{ State string }
	}
	if err := json.Unmarshal([]byte(runCLI(t, 0, "", "goal", "list", "--json", "--config", cfgPath)), &list); err != nil || len(list) != 2 {
		t.Fatalf("goal list --json: %v %+v", err, list)
	}
	if list[0].State != "done" || list[1].State != "active" || list[1].Steps[0].State != "waiting" || list[1].Objective != `keep "calm" for an hour` {
		t.Errorf("goal list --json: %+v", list)
	}
	if out := runCLI(t, 0, "", "goal", "cancel", "2", "--config", cfgPath); !strings.Contains(out, "cancelled goal 2") {
		t.Errorf("goal cancel: %s", out)
	}
	if out := runCLI(t, 0, "", "goal", "list", "--config", cfgPath); !strings.Contains(out, "1 done: switch the led on (1/1 steps") || !strings.Contains(out, "2 cancelled") {
		t.Errorf("goal list: %s", out)
	}
	if out := runCLI(t, 1, "", "goal", "add", "x", "--until", "@gpio/read{pin=\"led\"} is warm", "--config", cfgPath); !strings.Contains(out, "--until: ") || !strings.Contains(out, "want is high, is low") {
		t.Errorf("a bad --until: %s", out)
	}
	if out := runCLI(t, 1, "", "goal", "add", "x", "--steps", "0", "--config", cfgPath); !strings.Contains(out, "steps") {
		t.Errorf("--steps 0: %s", out)
	}
}

// TestGoalsSurviveKills runs the built daemon on a goal whose plan pulses a
// pin, waits a second, then at once waits for a reading that never comes and
// calls a tool its owner's policy asks about (nobody approves: it is refused
// after a second and the goal plans again). It SIGKILLs the daemon
// CLAWEDGE_GOAL_KILLS times (default 20), each time once a step is in the
// state it aims at, in turn: running, waiting for a time, waiting for an
// approval, waiting for a condition. Across every run: no step's call is ever
// started twice (its intent is in the audit at most once), the goal resumes
// after each restart, a clean stop leaves no intent without an outcome, and
// at the end the goal is done and reported.
func TestGoalsSurviveKills(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the daemon repeatedly")
	}
	kills := 20
	if s := os.Getenv("CLAWEDGE_GOAL_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	srv := openaitest.New(t)
	var score atomic.Int32
	score.Store(2)
	goalModel(srv, `@gpio/pulse{pin="led";ms=300} -> @goal/wait{seconds=1} -> `+
		`[@goal/until{read='@gpio/read{pin="led"}';cond="above";value=5;seconds=2}, @gpio/toggle{pin="lamp"}]`, &score)
	cfgPath, dataDir := writeConfig(t, `console: {stdin: false}
board:
  pins:
    led:  {gpio: 17, mode: out}
    lamp: {gpio: 18, mode: out}
policy: {approval_timeout: 1s, tools: {gpio/toggle: ask}}
goals: {poll: 50ms, evaluate_every: 1h, stall_after: 1000, max_plans: 1000, budget: {tokens: 0, steps: 0, approvals: 0}}
`+remoteConfig(srv, ""))
	if out := runCLI(t, 0, "", "goal", "add", "blink both lamps", "--config", cfgPath); !strings.Contains(out, "goal 1 set") {
		t.Fatalf("goal add on the store: %s", out)
	}

	targets := []string{"running", "waiting:time", "waiting:approval", "waiting:condition"}
	hit := map[string]int{} // the kills that landed in their target state
	for i := 0; i <= kills; i++ {
		final := i == kills
		if final {
			score.Store(10) // the next judgement says it is reached
		}
		cmd := exec.Command(binPath, "run", "--config", cfgPath)
		pr, pw := io.Pipe()
		cmd.Stderr = pw
		var log bytes.Buffer
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(pr)
			once := false
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if !once && strings.Contains(sc.Text(), `msg="clawedge ready"`) {
					once = true
					close(ready)
				}
			}
		}()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ready:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("run %d never ready:\n%s", i, log.String())
		}
		if final {
			g := waitGoal(t, cfgPath, "1", goals.Done)
			if !strings.Contains(g.Reason, "reached") {
				t.Errorf("done because %q", g.Reason)
			}
			cmd.Process.Signal(syscall.SIGTERM)
		} else {
			// Kill once a step is in the state aimed at (or after 6 s),
			// a random few milliseconds later.
			target := targets[i%len(targets)]
			deadline := time.Now().Add(6 * time.Second)
			for time.Now().Before(deadline) {
				out, err := exec.Command(binPath, "goal", "show", "1", "--json", "--config", cfgPath).Output()
				var g goals.Goal
				if err == nil && json.Unmarshal(out, &g) == nil && inState(g, target) {
					hit[target]++
					break
				}
			}
			time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
			cmd.Process.Signal(syscall.SIGKILL)
		}
		cmd.Wait()
		pw.Close()
		if final {
			// A clean stop after a start that closed every interrupted
			// intent: nothing pending.
			st, err := store.Open(dataDir, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if n, err := st.Interrupted(); err != nil || n != 0 {
				t.Errorf("%d intents without an outcome after the last clean stop (%v)", n, err)
			}
			st.Close()
		}
	}

	// The audit: every step's call at most once.
	st, err := store.Open(dataDir, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.Tail(100000)
	if err != nil {
		t.Fatal(err)
	}
	perStep := map[string]int{}
	interrupted := 0
	for _, e := range entries {
		if !strings.HasPrefix(e.Who, "goal:1 step ") || strings.Contains(e.Command, "gpio/read") {
			continue // the condition's reads are reads, audited each time
		}
		perStep[e.Who]++
		if perStep[e.Who] > 1 {
			t.Errorf("%s called twice: %s", e.Who, e.Command)
		}
		if strings.Contains(e.Detail, "interrupted") {
			interrupted++
		}
	}
	raw, _, _ := st.Get("goals", "1")
	var g goals.Goal
	json.Unmarshal(raw, &g)
	failed := 0
	for _, s := range g.Steps {
		if s.Result == goals.Interrupted {
			failed++
		}
	}
	t.Logf("%d kills, landed in %v; %d calls by steps, %d cut by a kill; %d steps failed as interrupted; %d plans",
		kills, hit, len(perStep), interrupted, failed, g.Spent.Plans)
	// Each run got a step to its target state after the restart: the goal
	// resumed (a loaded machine may miss a few within the 6 s).
	landed := 0
	for _, n := range hit {
		landed += n
	}
	if landed < kills*3/4 {
		t.Errorf("only %d of %d runs got a step to the state aimed at: the goal did not resume", landed, kills)
	}
	for _, target := range targets {
		if kills >= 2*len(targets) && hit[target] == 0 {
			t.Errorf("no kill landed with a step %s: %v", target, hit)
		}
	}
	if g.State != goals.Done {
		t.Errorf("goal 1 is %s at the end", g.State)
	}
}

// inState says whether a step of g is in state ("running", or "waiting:"
// and what it waits for).
func inState(g goals.Goal, state string) bool {
	for _, s := range g.Steps {
		st := string(s.State)
		if s.Waiting != "" {
			st += ":" + s.Waiting
		}
		if st == state {
			return true
		}
	}
	return false
}

// currentStep is the first step of g not over, else its last.
func currentStep(g goals.Goal) goals.Step {
	for _, s := range g.Steps {
		if !s.State.Terminal() {
			return s
		}
	}
	return g.Steps[len(g.Steps)-1]
}

// TestGoalTelegram: `/goal TEXT` from a Telegram owner sets a goal owned by
// them; the goal's question reaches them in their chat, `/goal answer`
// answers it, `/goal show` shows it, and the report of its end reaches them,
// not the board's other Telegram owner.
func TestGoalTelegram(t *testing.T) {
	tg := telegramtest.New(t)
	model := openaitest.New(t)
	var score atomic.Int32
	score.Store(9)
	goalModel(model, `@goal/ask{question="Shall I?"} -> @gpio/write{pin="led";value=1}`, &score)
	cfgPath, _ := writeConfig(t, telegramConfig(tg, []int64{42, 43}, "goals: {poll: 50ms}\n"+remoteConfig(model, "")))
	var out lockedBuffer
	startDaemon(t, cfgPath, &out)
	ann := telegramtest.User{ID: 42, FirstName: "Ann"}
	tg.Text(ann, nil, "/goal light the led")
	if got := unescape(waitSent(t, tg, 42, 1, &out)); !strings.Contains(got, "goal 1 set: light the led") {
		t.Fatalf("/goal: %q", got)
	}
	if got := waitSent(t, tg, 42, 2, &out); !strings.Contains(unescape(got), "goal 1 asks: Shall I?") {
		t.Fatalf("the question: %q", got)
	}
	tg.Text(ann, nil, "/goal answer 1 yes please")
	if got := unescape(waitSent(t, tg, 42, 3, &out)); !strings.Contains(got, "answered goal 1") {
		t.Fatalf("/goal answer: %q", got)
	}
	if got := unescape(waitSent(t, tg, 42, 4, &out)); !strings.Contains(got, "goal 1 done: light the led") || !strings.Contains(got, "2 of 2 steps done") {
		t.Fatalf("the report: %q", got)
	}
	tg.Text(ann, nil, "/goal show 1")
	if got := unescape(waitSent(t, tg, 42, 5, &out)); !strings.Contains(got, "owner telegram:42") || !strings.Contains(got, `2. [done] @gpio/write{pin="led";value=1}`) {
		t.Fatalf("/goal show: %q", got)
	}
	if other := tg.Sent(43); len(other) > 0 {
		t.Fatalf("Ann's goal was told to telegram:43: %q", other)
	}
}
