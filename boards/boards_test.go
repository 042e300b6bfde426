package boards_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/clawedge/clawedge/boards"
	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/rigtest"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
	"github.com/clawedge/clawedge/tools"
)

// board is one clawedge board of a test: the call path on a real store and
// the simulated board, and its boards service serving A2A on loopback.
type board struct {
	name string
	rig  *rigtest.Rig
	svc  *boards.Service
	late boards.Tools
	auth swapAuth // the rig's authorizer, its policy replaced as a config reload would
	// turn stands in for the board's agent (nil: it has no model).
	turn atomic.Pointer[turnFunc]
}

type turnFunc = func(ctx context.Context, who string, a tools.Auditor, text string) (string, error)

// swapAuth is an authorizer whose policy a test replaces while calls run.
type swapAuth struct {
	a atomic.Pointer[policy.Authorizer]
}

func (s *swapAuth) Authorize(ctx context.Context, c tools.Caller, call tools.Call) (string, error) {
	return s.a.Load().Authorize(ctx, c, call)
}

// setPolicy makes yaml's policy b's.
func (b *board) setPolicy(t *testing.T, yaml string) {
	t.Helper()
	old := b.rig.Auth
	b.auth.a.Store(&policy.Authorizer{Policy: policyOf(t, yaml), Approvals: old.Approvals, Timeout: old.Timeout})
}

func policyOf(t *testing.T, yaml string) *policy.Policy {
	t.Helper()
	cfg, err := config.Parse([]byte(yaml), "clawedge.yaml", func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	return policy.FromConfig(cfg, policy.Board{})
}

func newBoard(t *testing.T, name, policyYAML string, extra ...tools.Tool) *board {
	t.Helper()
	b := &board{name: name, rig: rigtest.New(t, rigtest.Options{Policy: policyOf(t, policyYAML)})}
	b.auth.a.Store(b.rig.Auth)
	b.rig.Runner.Authorizer = &b.auth
	if err := b.rig.Registry.Register(extra...); err != nil {
		t.Fatal(err)
	}
	if err := boards.RegisterTools(b.rig.Registry, &b.late); err != nil {
		t.Fatal(err)
	}
	b.start(t, "127.0.0.1:0")
	return b
}

func (b *board) start(t *testing.T, listen string) {
	t.Helper()
	svc, err := boards.Open(b.rig.Store, &boards.Service{Name: b.name, Listen: listen, Timeout: 2 * time.Second,
		ProbeEvery: 50 * time.Millisecond, Runner: b.rig.Runner, Offered: b.offered, Turn: b.agent})
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, svc)
}

// restart starts b again with its service's settings, on listen.
func (b *board) restart(t *testing.T, listen string) {
	t.Helper()
	old := b.svc
	svc, err := boards.Open(b.rig.Store, &boards.Service{Name: b.name, Listen: listen, Timeout: old.Timeout,
		ProbeEvery: old.ProbeEvery, Discover: old.Discover, DiscoverEvery: old.DiscoverEvery, Runner: b.rig.Runner, Offered: b.offered, Turn: b.agent})
	if err != nil {
		t.Fatal(err)
	}
	b.run(t, svc)
}

func (b *board) run(t *testing.T, svc *boards.Service) {
	t.Helper()
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.svc = svc
	b.late.Set(svc)
	t.Cleanup(func() { svc.Stop(context.Background()) })
}

// agent is b's Service.Turn: the stand-in the test set, if any.
func (b *board) agent(ctx context.Context, who string, a tools.Auditor, text string) (string, error) {
	f := b.turn.Load()
	if f == nil {
		return "", errors.New("no model")
	}
	return (*f)(ctx, who, a, text)
}

func (b *board) offered(c tools.Caller, tool string) bool {
	return b.auth.a.Load().Policy.Offered(c, tool)
}

// do runs a command on b as the person at its console.
func (b *board) do(t *testing.T, line string) (*tools.Report, error) {
	t.Helper()
	return b.doAs(t, tools.Person, line)
}

// doAs runs a command on b as composed by actor for the person at its console.
func (b *board) doAs(t *testing.T, actor tools.Actor, line string) (*tools.Report, error) {
	t.Helper()
	cmd, err := grammar.Parse(line, grammar.ParseOptions{Namespaces: b.rig.Registry.Namespaces()})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return b.rig.Runner.Run(context.Background(), tools.Caller{Channel: "console/stdin", User: "ann", Actor: actor}, cmd)
}

func (b *board) mustDo(t *testing.T, line string) *tools.Report {
	t.Helper()
	rep, err := b.do(t, line)
	if err != nil {
		t.Fatalf("%s on %s: %v", line, b.name, err)
	}
	return rep
}

// pair pairs a with b, a naming b as, by a code b issued through board/pair.
func pair(t *testing.T, a, b *board, as string) {
	t.Helper()
	code := b.mustDo(t, `@board/pair{}`).Stages[0].Calls[0].Result.Fields["code"].Str
	a.mustDo(t, `@board/add{name="`+as+`";code="`+code+`";url="`+b.svc.CardURL()+`"}`)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10s: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hasTool(b *board, name string) bool {
	t, err := b.rig.Registry.Lookup(name)
	return err == nil && !strings.HasPrefix(t.Spec().Doc, "(unavailable")
}

// audit is b's audit trail.
func audit(t *testing.T, s *store.Store) []store.AuditEntry {
	t.Helper()
	es, err := s.Tail(1000)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func find(es []store.AuditEntry, who, command string) (store.AuditEntry, bool) {
	for _, e := range es {
		if e.Who == who && strings.Contains(e.Command, command) {
			return e, true
		}
	}
	return store.AuditEntry{}, false
}

const (
	hallPolicy   = "policy:\n  tools: {\"garage.*\": allow, \"greenhouse.*\": allow}\n"
	garagePolicy = "policy:\n  users: {\"board:hall\": {\"gpio/*\": allow}}\n"
)

func TestThreeBoardsPairCallAndAudit(t *testing.T) {
	hall := newBoard(t, "hall", hallPolicy)
	garage := newBoard(t, "garage", garagePolicy)
	greenhouse := newBoard(t, "greenhouse", "")
	pair(t, hall, garage, "garage")
	pair(t, hall, greenhouse, "greenhouse")

	if _, ok := garage.svc.Peers().Get("hall"); !ok {
		t.Fatal("garage does not list hall after pairing")
	}
	eventually(t, "hall lists garage.gpio/write", func() bool { return hasTool(hall, "garage.gpio/write") })

	rep := hall.mustDo(t, `@garage.gpio/write{pin="led";value=1}`)
	if garage.rig.Level(t, "led") != hal.High {
		t.Fatal("garage's led is not on")
	}
	if hall.rig.Level(t, "led") != hal.Low {
		t.Fatal("hall's own led moved")
	}
	// One call id in both audit trails: hall's as the person, garage's as board:hall.
	onHall, ok := find(audit(t, hall.rig.Store), "ann", `@garage.gpio/write{pin="led";value=1}`)
	if !ok || !onHall.OK {
		t.Fatalf("hall's audit has no successful call by ann: %+v", audit(t, hall.rig.Store))
	}
	callID := between(onHall.Detail, "[call ", ",")
	if callID == "" {
		t.Fatalf("hall's outcome names no call id: %q", onHall.Detail)
	}
	onGarage, ok := find(audit(t, garage.rig.Store), "board:hall", `@gpio/write{pin="led";value=1} [call `+callID+`]`)
	if !ok || !onGarage.OK || onGarage.Channel != "board" {
		t.Fatalf("garage's audit has no call %s by board:hall: %+v", callID, audit(t, garage.rig.Store))
	}
	_ = rep

	// A tool garage's policy does not offer board:hall is not even listed on hall.
	if _, err := hall.rig.Registry.Lookup("garage.sys/status"); err == nil {
		t.Error("hall lists garage.sys/status, which garage's policy denies board:hall")
	}
	// hall's policy decides first: without a rule naming the board, the
	// model's call is not sent.
	hall.setPolicy(t, "")
	if _, err := hall.doAs(t, tools.Model, `@garage.gpio/write{pin="led";value=0}`); err == nil || !strings.Contains(err.Error(), "denied by the policy") {
		t.Fatalf("hall without a rule for garage: %v", err)
	}
	if garage.rig.Level(t, "led") != hal.High {
		t.Fatal("a call hall's policy denied reached garage")
	}
	hall.setPolicy(t, hallPolicy)

	// garage's policy now denies board:hall: garage refuses, hall says so.
	garage.setPolicy(t, "policy:\n  users: {\"board:hall\": {\"gpio/write\": deny}}\n")
	_, err := hall.do(t, `@garage.gpio/write{pin="led";value=0}`)
	var refusal *boards.Refusal
	if !errors.As(err, &refusal) || refusal.Board != "garage" || !strings.Contains(err.Error(), "denied by the policy") {
		t.Fatalf("garage's refusal as hall reports it: %v", err)
	}
	if garage.rig.Level(t, "led") != hal.High {
		t.Fatal("garage's refused call moved the led")
	}
	if e, ok := find(audit(t, garage.rig.Store), "board:hall", `@gpio/write{pin="led";value=0}`); !ok || e.OK || !strings.Contains(e.Detail, "refused") {
		t.Fatalf("garage's audit has no refused call by board:hall: %+v", e)
	}

	// greenhouse answers hall too.
	eventually(t, "hall lists greenhouse.gpio/read", func() bool { return hasTool(hall, "greenhouse.gpio/read") })
	greenhouse.rig.Sim.Drive(27, hal.Low)
	if got := hall.mustDo(t, `@greenhouse.gpio/read{pin="button"}`).Text(); !strings.Contains(got, "0") {
		t.Errorf("greenhouse's button as hall reads it: %q", got)
	}
}

func between(s, from, to string) string {
	_, rest, ok := strings.Cut(s, from)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, to)
	return v
}

// stranger is an HTTP client with a certificate no board paired.
func stranger(t *testing.T) *http.Client {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stranger"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}}}
}

func TestStrangerGetsTheCardOnly(t *testing.T) {
	garage := newBoard(t, "garage", garagePolicy)
	c := stranger(t)
	url := garage.svc.CardURL()
	resp, err := c.Get(url + boards.CardPath)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the card: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = c.Get(url + boards.ToolsPath)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a stranger's tools: %v %v", resp, err)
	}
	resp.Body.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"@gpio/write{pin=\"led\";value=1}"}]}}}`
	resp, err = c.Post(url+boards.RPCPath, "application/json", strings.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a stranger's SendMessage: %v %v", resp, err)
	}
	resp.Body.Close()
	if garage.rig.Level(t, "led") != hal.Low {
		t.Fatal("a stranger moved the led")
	}
	// Wrong codes: five, then every code is refused for a while, the right one too.
	for i := range 5 {
		resp, err := c.Post(url+boards.PairPath, "application/json", bytes.NewReader([]byte(`{"name":"evil","proof":"`+strings.Repeat("0", 64)+`"}`)))
		if err != nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("wrong code %d: %v %v", i, resp, err)
		}
		resp.Body.Close()
	}
	if garage.svc.Peers().PausedUntil().IsZero() {
		t.Fatal("five wrong codes started no cooldown")
	}
	hall := newBoard(t, "hall", hallPolicy)
	code := garage.mustDo(t, `@board/pair{}`).Stages[0].Calls[0].Result.Fields["code"].Str
	if _, err := hall.do(t, `@board/add{name="garage";code="`+code+`";url="`+url+`"}`); err == nil || !strings.Contains(err.Error(), "paused") {
		t.Fatalf("the right code during a cooldown: %v", err)
	}
}

func TestRevokedBoardIsRefusedAtOnce(t *testing.T) {
	hall := newBoard(t, "hall", hallPolicy)
	garage := newBoard(t, "garage", garagePolicy)
	pair(t, hall, garage, "garage")
	eventually(t, "hall lists garage.gpio/write", func() bool { return hasTool(hall, "garage.gpio/write") })

	// garage unpairs hall while hall is away... here at once: hall's next call is refused.
	garage.mustDo(t, `@board/rm{name="hall"}`)
	if _, ok := hall.svc.Peers().Get("garage"); ok {
		t.Error("garage's board/rm did not tell hall")
	}
	if _, err := hall.rig.Registry.Lookup("garage.gpio/write"); err == nil {
		t.Error("hall still lists garage's tools after the unpairing")
	}
	// Paired again, then unpaired on hall's side only (garage not told): garage refuses hall's certificate.
	pair(t, hall, garage, "garage")
	eventually(t, "hall lists garage.gpio/write again", func() bool { return hasTool(hall, "garage.gpio/write") })
	if _, _, err := garageForget(garage, "hall"); err != nil {
		t.Fatal(err)
	}
	_, err := hall.do(t, `@garage.gpio/write{pin="led";value=1}`)
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("a call from a board garage unpaired: %v", err)
	}
	if garage.rig.Level(t, "led") != hal.Low {
		t.Fatal("a revoked board moved the led")
	}
}

// garageForget unpairs name on b only, as if the other board were away.
func garageForget(b *board, name string) (boards.Peer, bool, error) {
	return b.svc.Peers().Remove(name)
}

// slowTool blocks until released, counting its runs: an effect in flight.
type slowTool struct {
	runs    atomic.Int32
	started chan struct{}
	release chan struct{}
}

func (s *slowTool) Spec() grammar.ToolSpec {
	return grammar.ToolSpec{Name: "door/open", Doc: "Open the door (slowly)."}
}

func (s *slowTool) Run(ctx context.Context, _ grammar.Args) (tools.Result, error) {
	s.runs.Add(1)
	s.started <- struct{}{}
	select {
	case <-s.release:
	case <-time.After(10 * time.Second):
	}
	return tools.Result{Text: "open"}, nil
}

func TestBoardGoneMidCallIsUnknownNeverTwice(t *testing.T) {
	hall := newBoard(t, "hall", hallPolicy)
	door := &slowTool{started: make(chan struct{}, 1), release: make(chan struct{})}
	garage := newBoard(t, "garage", "policy:\n  users: {\"board:hall\": {\"door/*\": allow, \"gpio/*\": allow}}\n", door)
	pair(t, hall, garage, "garage")
	eventually(t, "hall lists garage.door/open", func() bool { return hasTool(hall, "garage.door/open") })
	addr := garage.svc.Addr().String()

	errc := make(chan error, 1)
	go func() { _, err := hall.do(t, `@garage.door/open{}`); errc <- err }()
	<-door.started
	// garage goes away mid-call (its server and connections closed at once).
	garage.svc.Stop(canceled())
	var err error
	select {
	case err = <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("hall still waits on a board that went away")
	}
	if !errors.Is(err, boards.ErrUnknown) {
		t.Fatalf("a call in flight when the board went away: %v, want unknown", err)
	}
	// Fails fast while garage is away, naming it and when it was last seen.
	start := time.Now()
	_, err = hall.do(t, `@garage.gpio/write{pin="led";value=1}`)
	if err == nil || !strings.Contains(err.Error(), "garage") || !strings.Contains(err.Error(), "last seen") {
		t.Fatalf("a call to an absent board: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a call to an absent board took %v", d)
	}
	if _, err := hall.rig.Registry.Lookup("garage.gpio/write"); err != nil {
		t.Error("an absent board's tools are no longer listed")
	}
	close(door.release)
	// garage comes back on the same address: the interrupted call is
	// unknown there too and never run again; hall uses garage again.
	garage.start(t, addr)
	eventually(t, "hall uses garage again", func() bool { return hasTool(hall, "garage.gpio/write") })
	hall.mustDo(t, `@garage.gpio/write{pin="led";value=1}`)
	if garage.rig.Level(t, "led") != hal.High {
		t.Fatal("garage's led is not on after it came back")
	}
	if n := door.runs.Load(); n != 1 {
		t.Fatalf("the door opened %d times, want 1", n)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// sdkClient is the Go SDK's own JSON-RPC client to b, with the
// certificate of as (a paired board, or not).
func sdkClient(b, as *board) a2aclient.Transport {
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{as.svc.Identity().Cert}}}}
	return a2aclient.NewJSONRPCTransport(b.svc.CardURL()+boards.RPCPath, hc)
}

// A task is the board's that sent it: another paired board reads no task
// of it, nor cancels one; its sender reads it with the Go SDK's client.
func TestTasksAreTheirSendersOnly(t *testing.T) {
	hall := newBoard(t, "hall", hallPolicy)
	garage := newBoard(t, "garage", "policy:\n  users: {\"board:hall\": {\"gpio/*\": allow}, \"board:greenhouse\": {\"gpio/*\": allow}}\n")
	greenhouse := newBoard(t, "greenhouse", "")
	pair(t, hall, garage, "garage")
	pair(t, greenhouse, garage, "garage")

	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(`@gpio/write{pin="led";value=1}`))
	res, err := sdkClient(garage, hall).SendMessage(context.Background(), nil, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	if task.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("hall's task: %+v", task.Status)
	}
	if got, err := sdkClient(garage, hall).GetTask(context.Background(), nil, &a2a.GetTaskRequest{ID: task.ID}); err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("hall reads its task: %v %v", got, err)
	}
	if _, err := sdkClient(garage, greenhouse).GetTask(context.Background(), nil, &a2a.GetTaskRequest{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("greenhouse reads hall's task: %v", err)
	}
	if _, err := sdkClient(garage, greenhouse).CancelTask(context.Background(), nil, &a2a.CancelTaskRequest{ID: task.ID}); err == nil {
		t.Fatal("greenhouse cancels hall's task")
	}
	// The same call id again is not run again.
	again := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(`@gpio/toggle{pin="led"}`))
	again.ID = msg.ID
	if _, err := sdkClient(garage, hall).SendMessage(context.Background(), nil, &a2a.SendMessageRequest{Message: again}); err == nil || !strings.Contains(err.Error(), "not run again") {
		t.Fatalf("a call id sent twice: %v", err)
	}
	if garage.rig.Level(t, "led") != hal.High {
		t.Fatal("the call sent twice ran")
	}
}

// A probe of tools that did not change is answered 304, without the list.
func TestToolsListIsConditional(t *testing.T) {
	hall := newBoard(t, "hall", hallPolicy)
	garage := newBoard(t, "garage", garagePolicy)
	pair(t, hall, garage, "garage")
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		InsecureSkipVerify: true, Certificates: []tls.Certificate{hall.svc.Identity().Cert}}}}
	get := func(etag string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, garage.svc.CardURL()+boards.ToolsPath, nil)
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	first := get("")
	if first.StatusCode != http.StatusOK || first.Header.Get("ETag") == "" {
		t.Fatalf("the tools: %s, ETag %q", first.Status, first.Header.Get("ETag"))
	}
	if again := get(first.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Fatalf("the same tools again: %s", again.Status)
	}
	// What garage offers hall changes: the list is sent again.
	garage.setPolicy(t, "policy:\n  users: {\"board:hall\": {\"gpio/write\": deny}}\n  default: deny\n")
	if changed := get(first.Header.Get("ETag")); changed.StatusCode != http.StatusOK {
		t.Fatalf("changed tools: %s", changed.Status)
	}
}
