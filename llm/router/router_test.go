package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/llm/router/routertest"
)

var hi = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

// three declares the usual board: a small local model, a LAN server and a
// paid API.
func three(local, lan, claude *routertest.Provider) []router.Entry {
	return []router.Entry{
		{Provider: local, Model: "qwen2.5-0.5b", Quality: 3, Speed: 4},
		{Provider: lan, Model: "qwen2.5:7b", Quality: 6, Speed: 8, CostIn: 0.0001, CostOut: 0.0002},
		{Provider: claude, Model: "claude-sonnet-4-5", Quality: 9, Speed: 6, CostIn: 3, CostOut: 15},
	}
}

func newRouter(t testing.TB, entries []router.Entry, opts router.Options) *router.Router {
	t.Helper()
	r, err := router.New(entries, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// chat runs one call to the end.
func chat(t *testing.T, ctx context.Context, r *router.Router, req llm.Request) (string, *llm.Final, error) {
	t.Helper()
	s, err := r.Chat(ctx, req)
	if err != nil {
		return "", nil, err
	}
	text, f, err := llm.Collect(s)
	if err == nil {
		if _, err := s.Next(); err != io.EOF {
			t.Errorf("Next after the final chunk = %v, want io.EOF", err)
		}
	}
	return text, f, err
}

func mustChat(t *testing.T, r *router.Router, req llm.Request) (string, *llm.Final) {
	t.Helper()
	text, f, err := chat(t, context.Background(), r, req)
	if err != nil {
		t.Fatal(err)
	}
	return text, f
}

func attempts(err error) []string {
	var re *router.Error
	if !errors.As(err, &re) {
		return nil
	}
	var names []string
	for _, a := range re.Attempts {
		names = append(names, a.Provider)
	}
	return names
}

// With every provider down, the error lists them in the order the strategy
// tried them, which is its order of preference.
func TestStrategyOrder(t *testing.T) {
	for _, tc := range []struct {
		strategy router.Strategy
		order    []string
		want     string
	}{
		{router.LocalFirst, nil, "local lan claude"},
		{"", nil, "local lan claude"},
		{router.LocalFirst, []string{"claude"}, "local claude lan"},
		{router.Quality, nil, "claude lan local"},
		{router.Speed, nil, "lan claude local"},
		{router.Cost, nil, "local lan claude"},
		// local 0.4·2/9 + 0.3·3/9 + 0.3 = 0.49; lan 0.4·5/9 + 0.3·7/9 + 0.3·~1 = 0.76;
		// claude 0.4·8/9 + 0.3·5/9 + 0 = 0.52.
		{router.Balanced, nil, "lan claude local"},
		{router.Fallback, nil, "local lan claude"},
		{router.Fallback, []string{"claude", "local"}, "claude local lan"},
		{router.Cascade, nil, "local lan claude"},
	} {
		down := routertest.Fail(fmt.Errorf("connection refused: %w", llm.ErrUnavailable))
		local, lan, claude := routertest.Local("local", 4096, down), routertest.Remote("lan", 32768, down), routertest.Remote("claude", 200000, down)
		r := newRouter(t, three(local, lan, claude), router.Options{Strategy: tc.strategy, Order: tc.order})
		_, _, err := chat(t, context.Background(), r, hi)
		if got := strings.Join(attempts(err), " "); got != tc.want {
			t.Errorf("%s %v: tried %q, want %q (%v)", tc.strategy, tc.order, got, tc.want, err)
		}
		for _, p := range []*routertest.Provider{local, lan, claude} {
			if p.Calls() != 1 {
				t.Errorf("%s: %s called %d times, want 1", tc.strategy, p.Name(), p.Calls())
			}
		}
	}
}

// Cost takes the best of the cheapest; Cascade the weakest, to climb from.
func TestCostAndCascadeTies(t *testing.T) {
	entries := func() []router.Entry {
		return []router.Entry{
			{Provider: routertest.Remote("big", 0), Quality: 8},
			{Provider: routertest.Remote("small", 0), Quality: 2},
			{Provider: routertest.Remote("paid", 0), Quality: 10, CostOut: 1},
		}
	}
	for strategy, want := range map[router.Strategy]string{
		router.Cost:    "cost: remote big (est. cost 0)",
		router.Cascade: "cascade: remote small (est. cost 0)",
	} {
		_, f := mustChat(t, newRouter(t, entries(), router.Options{Strategy: strategy}), hi)
		if f.Route != want {
			t.Errorf("route = %q, want %q", f.Route, want)
		}
	}
}

func TestRoutes(t *testing.T) {
	for _, tc := range []struct {
		strategy router.Strategy
		want     string
	}{
		{router.LocalFirst, "local-first: local"},
		{router.Quality, "quality: remote claude (quality 9)"},
		{router.Speed, "speed: remote lan (speed 8)"},
		{router.Cost, "cost: local (est. cost 0)"},
		{router.Balanced, "balanced: remote lan (score 0.76)"},
		{router.Fallback, "fallback: local"},
		{router.Cascade, "cascade: local (est. cost 0)"},
	} {
		r := newRouter(t, three(routertest.Local("local", 4096), routertest.Remote("lan", 0), routertest.Remote("claude", 0)), router.Options{Strategy: tc.strategy})
		text, f := mustChat(t, r, hi)
		if text != "ok" || f.Route != tc.want {
			t.Errorf("%s: %q, route %q, want %q", tc.strategy, text, f.Route, tc.want)
		}
	}
}

func TestLocalFirstFallsBackOnCapacity(t *testing.T) {
	local := routertest.Local("local", 4096, routertest.Fail(fmt.Errorf("local model: needs 900 MB, 300 MB available: %w", llm.ErrCapacity)))
	lan := routertest.Remote("lan", 0, routertest.Reply("from lan", 20, 5))
	r := newRouter(t, three(local, lan, routertest.Remote("claude", 0)), router.Options{})
	text, f := mustChat(t, r, hi)
	want := "local-first: remote lan after local: local model: needs 900 MB, 300 MB available: capacity exceeded"
	if text != "from lan" || f.Provider != "lan" || f.Model != "qwen2.5:7b" || f.Route != want {
		t.Errorf("got %q from %s/%s, route %q, want %q", text, f.Provider, f.Model, f.Route, want)
	}
}

// A runner that crashes after Chat returned but before any text: the
// caller sees only the next provider's reply.
func TestFallbackBeforeText(t *testing.T) {
	crash := fmt.Errorf("local model: the runner died (signal: killed): %w", llm.ErrUnavailable)
	local := routertest.Local("local", 4096, routertest.Step{Text: []string{""}, StreamErr: crash})
	lan := routertest.Remote("lan", 0, routertest.Reply("from lan", 20, 5))
	r := newRouter(t, three(local, lan, routertest.Remote("claude", 0)), router.Options{})
	text, f := mustChat(t, r, hi)
	if text != "from lan" || f.Route != "local-first: remote lan after local: local model: the runner died (signal: killed): model unavailable" {
		t.Errorf("got %q, route %q", text, f.Route)
	}
	if local.Closed() != 1 {
		t.Errorf("the failed stream was closed %d times, want 1", local.Closed())
	}
	st := r.Stats()
	if st[0].Calls != 1 || st[0].Failures != 1 || st[0].Replies != 0 || !strings.Contains(st[0].LastError, "runner died") {
		t.Errorf("local stats = %+v", st[0])
	}
}

// Once text reached the caller, a failure is the caller's to handle.
func TestNoSwitchAfterText(t *testing.T) {
	crash := fmt.Errorf("runner died: %w", llm.ErrUnavailable)
	local := routertest.Local("local", 4096, routertest.Step{Text: []string{"The door is"}, StreamErr: crash})
	lan := routertest.Remote("lan", 0)
	r := newRouter(t, three(local, lan, routertest.Remote("claude", 0)), router.Options{})
	s, err := r.Chat(context.Background(), hi)
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.Next()
	if err != nil || c.Text != "The door is" {
		t.Fatalf("first chunk %+v, %v", c, err)
	}
	_, err = s.Next()
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "local: runner died") {
		t.Errorf("error = %v, want the local failure", err)
	}
	if _, again := s.Next(); again == nil || again.Error() != err.Error() {
		t.Errorf("Next after the failure = %v, want the same error", again)
	}
	s.Close()
	if lan.Calls() != 0 {
		t.Errorf("lan called %d times after text had streamed", lan.Calls())
	}
	if st := r.Stats(); st[0].Failures != 1 {
		t.Errorf("stats = %+v", st[0])
	}
}

// Only refusals and outages fall over, except in Fallback and Cascade,
// where any failure does.
func TestOtherErrors(t *testing.T) {
	bad := errors.New("401 unauthorized")
	for strategy, fallsOver := range map[router.Strategy]bool{router.LocalFirst: false, router.Quality: false, router.Fallback: true, router.Cascade: true} {
		local := routertest.Local("local", 4096, routertest.Fail(bad))
		r := newRouter(t, []router.Entry{{Provider: local, Quality: 10}, {Provider: routertest.Remote("lan", 0)}}, router.Options{Strategy: strategy})
		text, _, err := chat(t, context.Background(), r, hi)
		if fallsOver && (err != nil || text != "ok") {
			t.Errorf("%s: %q, %v; want the next provider's answer", strategy, text, err)
		}
		if !fallsOver && !errors.Is(err, bad) {
			t.Errorf("%s: %q, %v; want the error", strategy, text, err)
		}
	}
}

func TestCallerCancellationDoesNotFallOver(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	local := routertest.Local("local", 4096, routertest.Fail(fmt.Errorf("local model: %w", context.Canceled)))
	lan := routertest.Remote("lan", 0)
	r := newRouter(t, []router.Entry{{Provider: local}, {Provider: lan}}, router.Options{Strategy: router.Fallback})
	if _, _, err := chat(t, ctx, r, hi); !errors.Is(err, context.Canceled) || lan.Calls() != 0 {
		t.Errorf("err %v, lan calls %d; want the cancellation and no other call", err, lan.Calls())
	}
}

func TestPromptTooLongForLocal(t *testing.T) {
	local, lan := routertest.Local("local", 100), routertest.Remote("lan", 0)
	r := newRouter(t, []router.Entry{{Provider: local}, {Provider: lan}}, router.Options{})
	long := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("x", 1000)}}}
	_, f := mustChat(t, r, long)
	// 1000 bytes / 3.5 = 286, + 4 for the message, + 3 for the reply.
	if want := "local-first: remote lan after local: capacity exceeded (prompt 293 tokens > window 100)"; f.Route != want {
		t.Errorf("route %q, want %q", f.Route, want)
	}
	if local.Calls() != 0 {
		t.Errorf("local called for a prompt longer than its window")
	}
	if st := r.Stats(); st[0].Skips != 1 || st[0].Calls != 0 {
		t.Errorf("local stats %+v", st[0])
	}
	// A short prompt stays local.
	if _, f := mustChat(t, r, hi); f.Provider != "local" {
		t.Errorf("short prompt went to %s", f.Provider)
	}
}

// A provider that counts tokens is asked rather than estimated for.
func TestCountTokens(t *testing.T) {
	local := routertest.Counting{Provider: routertest.Local("local", 4096), Count: func(llm.Request) int { return 9120 }}
	r := newRouter(t, []router.Entry{{Provider: local}, {Provider: routertest.Remote("lan", 0)}}, router.Options{})
	_, f := mustChat(t, r, hi)
	if want := "local-first: remote lan after local: capacity exceeded (prompt 9,120 tokens > window 4,096)"; f.Route != want {
		t.Errorf("route %q, want %q", f.Route, want)
	}
}

func TestEstimateTokens(t *testing.T) {
	req := llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: strings.Repeat("a", 70)},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "1", Name: "gpio.write", Arguments: json.RawMessage(`{"pin":"led"}`)}}},
		},
		Tools: []llm.ToolDef{{Name: "gpio.write", Doc: "sets a pin", Params: json.RawMessage(`{}`)}},
	}
	// (70 + 1+10+13 + 10+10+2 = 116 bytes) / 3.5 = 34 (rounded up), + 2·4 + 8 + 3.
	if got := router.EstimateTokens(req); got != 34+8+8+3 {
		t.Errorf("EstimateTokens = %d, want %d", got, 34+8+8+3)
	}
}

func TestToolsFilter(t *testing.T) {
	lan, claude := routertest.Remote("lan", 0), routertest.Remote("claude", 0)
	noTools := routertest.New("tiny", llm.Caps{}) // its caps say no tools
	r := newRouter(t, []router.Entry{{Provider: noTools}, {Provider: lan, NoTools: true}, {Provider: claude}}, router.Options{Strategy: router.Fallback})
	req := hi
	req.Tools = []llm.ToolDef{{Name: "gpio.write"}}
	_, f := mustChat(t, r, req)
	if want := "fallback: remote claude after tiny: tools not supported; lan: tools not supported"; f.Route != want {
		t.Errorf("route %q, want %q", f.Route, want)
	}
	if _, f := mustChat(t, r, hi); f.Provider != "tiny" {
		t.Errorf("without tools: %s answered, want tiny", f.Provider)
	}
	if c := r.Caps(); !c.Tools || c.Local {
		t.Errorf("router caps %+v", c)
	}
}

func TestQueueBudget(t *testing.T) {
	hold := make(chan struct{})
	local := routertest.Local("local", 4096, routertest.Step{Text: []string{"busy"}, Hold: hold}, routertest.Reply("local again", 1, 1))
	lan := routertest.Remote("lan", 0)
	r := newRouter(t, []router.Entry{{Provider: local}, {Provider: lan}}, router.Options{LocalQueueBudget: 20 * time.Millisecond})

	first, err := r.Chat(context.Background(), hi)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, f := mustChat(t, r, hi)
	if want := "local-first: remote lan after local: capacity exceeded (busy: queue wait over the 20ms budget)"; f.Route != want {
		t.Errorf("route %q, want %q", f.Route, want)
	}
	if d := time.Since(start); d < 20*time.Millisecond {
		t.Errorf("went remote after %v, before the budget", d)
	}
	close(hold)
	if text, _, err := llm.Collect(first); text != "busy" || err != nil {
		t.Errorf("first reply %q, %v", text, err)
	}
	// The slot is free again.
	if _, f := mustChat(t, r, hi); f.Provider != "local" {
		t.Errorf("after the first reply: %s answered", f.Provider)
	}
}

// With nowhere else to go, a call waits for the local model.
func TestQueueWaitsWithoutAlternative(t *testing.T) {
	hold := make(chan struct{})
	local := routertest.Local("local", 4096, routertest.Step{Text: []string{"busy"}, Hold: hold}, routertest.Reply("second", 1, 1))
	r := newRouter(t, []router.Entry{{Provider: local}}, router.Options{LocalQueueBudget: time.Millisecond})
	first, err := r.Chat(context.Background(), hi)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(30 * time.Millisecond)
		close(hold)
		llm.Collect(first)
	}()
	if text, _ := mustChat(t, r, hi); text != "second" {
		t.Errorf("second call got %q", text)
	}

	// Closing a stream early frees the slot too; a cancelled wait ends.
	held, _ := r.Chat(context.Background(), hi)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, _, err := chat(t, ctx, r, hi); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("wait past the deadline: %v", err)
	}
	held.Close()
	held.Close()
	if _, f := mustChat(t, r, hi); f.Provider != "local" {
		t.Errorf("after Close: %+v", f)
	}
}

// escalated is req with the escalations added, as the agent sends them.
func escalated(req llm.Request, from, reason string) llm.Request {
	req.Escalations = append(slices.Clip(req.Escalations), llm.Escalation{From: from, Reason: reason})
	return req
}

func TestEscalate(t *testing.T) {
	local, lan, claude := routertest.Local("local", 4096), routertest.Remote("lan", 0), routertest.Remote("claude", 0)
	r := newRouter(t, three(local, lan, claude), router.Options{})
	ctx := context.Background()

	req := escalated(hi, "local", "tool call invalid after a repair")
	_, f, err := chat(t, ctx, r, req)
	if err != nil || f.Route != "local-first: remote lan after local: escalated (tool call invalid after a repair)" {
		t.Errorf("route %q, %v", f.Route, err)
	}
	if local.Calls() != 0 {
		t.Errorf("local called after an escalation past it")
	}
	req = escalated(req, "lan", "same tool error twice")
	if _, f, _ = chat(t, ctx, r, req); f.Route != "local-first: remote claude after local: escalated (same tool error twice); lan: escalated (same tool error twice)" {
		t.Errorf("route %q", f.Route)
	}
	// Past the last provider, the hint is ignored.
	if _, f, _ = chat(t, ctx, r, escalated(hi, "claude", "insufficient")); f.Route != "local-first: local (escalation past claude ignored: no provider after it)" {
		t.Errorf("route %q", f.Route)
	}
	// An unknown name changes nothing.
	if _, f, _ = chat(t, ctx, r, escalated(hi, "nobody", "x")); f.Route != "local-first: local" {
		t.Errorf("route %q", f.Route)
	}
}

// Cascade climbs one step per insufficient answer.
func TestCascadeEscalation(t *testing.T) {
	r := newRouter(t, three(routertest.Local("local", 4096), routertest.Remote("lan", 0), routertest.Remote("claude", 0)), router.Options{Strategy: router.Cascade})
	req := hi
	var got []string
	for range 3 {
		_, f, err := chat(t, context.Background(), r, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, f.Provider)
		req = escalated(req, f.Provider, "insufficient")
	}
	if strings.Join(got, " ") != "local lan claude" {
		t.Errorf("cascade went %v", got)
	}
}

func TestCost(t *testing.T) {
	lan := routertest.Remote("lan", 0, routertest.Reply("answer", 1000, 2000), routertest.Step{Text: []string{strings.Repeat("y", 700)}})
	r := newRouter(t, []router.Entry{{Provider: lan, Model: "m", CostIn: 0.5, CostOut: 1.5}}, router.Options{})
	_, f := mustChat(t, r, hi)
	if math.Abs(f.Cost-3.5) > 1e-9 { // 1000·0.5/1000 + 2000·1.5/1000
		t.Errorf("cost %v, want 3.5", f.Cost)
	}
	// No usage from the provider: the prompt estimate (2 bytes → 1, +4
	// +3 = 8 tokens) and the reply's bytes (700 / 3.5 = 200 tokens).
	_, f = mustChat(t, r, hi)
	if want := (8*0.5 + 200*1.5) / 1000; math.Abs(f.Cost-want) > 1e-9 {
		t.Errorf("cost without usage %v, want %v", f.Cost, want)
	}
	// A local model costs nothing.
	_, f = mustChat(t, newRouter(t, []router.Entry{{Provider: routertest.Local("local", 0, routertest.Reply("x", 100, 100))}}, router.Options{}), hi)
	if f.Cost != 0 {
		t.Errorf("local cost %v", f.Cost)
	}
}

func TestFinalFields(t *testing.T) {
	step := routertest.Reply("x", 3, 4)
	step.Final.Model = "qwen2.5:7b-instruct-q4"
	step.Final.Timing.FirstToken = time.Second
	lan := routertest.Remote("lan", 0, step, routertest.Reply("y", 1, 1))
	r := newRouter(t, []router.Entry{{Provider: lan, Model: "qwen2.5:7b"}}, router.Options{})
	_, f := mustChat(t, r, hi)
	if f.Provider != "lan" || f.Model != "qwen2.5:7b-instruct-q4" || f.Timing.FirstToken != time.Second || f.Reason != llm.ReasonStop {
		t.Errorf("final %+v", f)
	}
	_, f = mustChat(t, r, hi)
	if f.Model != "qwen2.5:7b" || f.Timing.FirstToken <= 0 {
		t.Errorf("final %+v: want the declared model and the router's first-token time", f)
	}
}

func TestStats(t *testing.T) {
	local := routertest.Local("local", 4096, routertest.Reply("a", 10, 20), routertest.Fail(fmt.Errorf("oom: %w", llm.ErrCapacity)))
	lan := routertest.Remote("lan", 0, routertest.Reply("b", 100, 200))
	before := time.Now()
	r := newRouter(t, []router.Entry{{Provider: local, Model: "small"}, {Provider: lan, CostIn: 1, CostOut: 2}},
		router.Options{Totals: []router.Stats{{Name: "lan", Calls: 5, Replies: 5, TokensIn: 1, Cost: 0.25}, {Name: "gone", Calls: 9}}})
	mustChat(t, r, hi)
	mustChat(t, r, hi)
	st := r.Stats()
	if len(st) != 2 {
		t.Fatalf("stats %+v", st)
	}
	l, n := st[0], st[1]
	if l.Name != "local" || l.Model != "small" || !l.Local || l.Calls != 2 || l.Replies != 1 || l.Failures != 1 ||
		l.TokensIn != 10 || l.TokensOut != 20 || l.Cost != 0 || l.LastRoute != "local-first: local" ||
		l.LastError != "oom: capacity exceeded" || l.Latency <= 0 || l.LastUsed.Before(before) {
		t.Errorf("local stats %+v", l)
	}
	if n.Name != "lan" || n.Local || n.Calls != 6 || n.Replies != 6 || n.TokensIn != 101 || n.TokensOut != 200 ||
		math.Abs(n.Cost-(0.25+0.1+0.4)) > 1e-9 || n.LastRoute != "local-first: remote lan after local: oom: capacity exceeded" {
		t.Errorf("lan stats %+v", n)
	}
	// A snapshot is a copy.
	st[0].Calls = 100
	if r.Stats()[0].Calls != 2 {
		t.Errorf("Stats returned shared state")
	}
	if _, err := json.Marshal(st); err != nil {
		t.Error(err)
	}
}

func TestAllFail(t *testing.T) {
	local := routertest.Local("local", 100)
	lan := routertest.Remote("lan", 0, routertest.Fail(fmt.Errorf("dial tcp 192.168.1.10:11434: connection refused: %w", llm.ErrUnavailable)))
	claude := routertest.Remote("claude", 0, routertest.Step{StreamErr: fmt.Errorf("overloaded: %w", llm.ErrUnavailable)})
	r := newRouter(t, []router.Entry{{Provider: local}, {Provider: lan}, {Provider: claude}}, router.Options{})
	long := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: strings.Repeat("x", 1000)}}}

	// claude fails inside the stream, so Chat succeeds and Next fails.
	s, err := r.Chat(context.Background(), long)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Next()
	want := "router: no model could answer: local: capacity exceeded (prompt 293 tokens > window 100); " +
		"lan: dial tcp 192.168.1.10:11434: connection refused: model unavailable; claude: overloaded: model unavailable"
	if err == nil || err.Error() != want {
		t.Errorf("error\n%v\nwant\n%s", err, want)
	}
	var re *router.Error
	if !errors.As(err, &re) || len(re.Attempts) != 3 || !errors.Is(err, llm.ErrCapacity) || !errors.Is(err, llm.ErrUnavailable) {
		t.Errorf("error %#v does not wrap what it should", err)
	}
	s.Close()

	// Failures that are neither still wrap ErrUnavailable.
	r = newRouter(t, []router.Entry{{Provider: routertest.Remote("a", 0, routertest.Fail(errors.New("401")))}}, router.Options{Strategy: router.Fallback})
	if _, _, err := chat(t, context.Background(), r, hi); !errors.Is(err, llm.ErrUnavailable) || len(attempts(err)) != 1 {
		t.Errorf("error %v", err)
	}
}

func TestNew(t *testing.T) {
	p := routertest.Remote("a", 0)
	for _, tc := range []struct {
		entries []router.Entry
		opts    router.Options
		want    string
	}{
		{nil, router.Options{}, "no providers"},
		{[]router.Entry{{Provider: p}}, router.Options{Strategy: "cheapest"}, `unknown strategy "cheapest"`},
		{[]router.Entry{{Provider: p}, {Provider: p}}, router.Options{}, `two providers are named "a"`},
		{[]router.Entry{{Provider: p}}, router.Options{Order: []string{"b"}}, `order names "b", which is not a provider`},
		{[]router.Entry{{Provider: p}}, router.Options{Order: []string{"a", "a"}}, `order lists "a" twice`},
		{[]router.Entry{{Provider: p, Quality: 11}}, router.Options{}, "a: quality 11 is not a score from 1 to 10"},
		{[]router.Entry{{Provider: p, CostIn: -1}}, router.Options{}, "a: costs must not be negative"},
		{[]router.Entry{{}}, router.Options{}, "entry 0 has no provider"},
	} {
		if _, err := router.New(tc.entries, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v, %+v) = %v, want %q", tc.entries, tc.opts, err, tc.want)
		}
	}
	r := newRouter(t, []router.Entry{{Provider: p, Name: "renamed", Context: 100}, {Provider: routertest.Local("local", 8192)}}, router.Options{})
	if r.Name() != "router" || r.Strategy() != router.LocalFirst || r.Caps().Context != 8192 || r.Stats()[0].Name != "renamed" {
		t.Errorf("router %s %s %+v %+v", r.Name(), r.Strategy(), r.Caps(), r.Stats())
	}
}

// Many callers at once: one local generation at a time, the rest queue
// or go remote, and the totals add up.
func TestConcurrent(t *testing.T) {
	local := routertest.Local("local", 4096, routertest.Reply("l", 1, 1))
	lan := routertest.Remote("lan", 0, routertest.Reply("r", 1, 1))
	r := newRouter(t, []router.Entry{{Provider: local}, {Provider: lan}}, router.Options{LocalQueueBudget: time.Microsecond})
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 20 {
				s, err := r.Chat(context.Background(), hi)
				if err != nil {
					t.Error(err)
					return
				}
				if _, _, err := llm.Collect(s); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	var replies int64
	for _, s := range r.Stats() {
		replies += s.Replies
	}
	if replies != 16*20 {
		t.Errorf("%d replies counted, want %d", replies, 16*20)
	}
}

func BenchmarkDirect(b *testing.B) {
	p := routertest.Remote("lan", 0, routertest.Reply("ok", 10, 1))
	for b.Loop() {
		s, _ := p.Chat(context.Background(), hi)
		llm.Collect(s)
	}
}

// The router's cost per call over calling the provider directly.
func BenchmarkRouter(b *testing.B) {
	r := newRouter(b, three(routertest.Local("local", 4096, routertest.Reply("ok", 10, 1)), routertest.Remote("lan", 0), routertest.Remote("claude", 0)), router.Options{})
	for b.Loop() {
		s, err := r.Chat(context.Background(), hi)
		if err != nil {
			b.Fatal(err)
		}
		llm.Collect(s)
	}
}

func BenchmarkRouterBalanced(b *testing.B) {
	r := newRouter(b, three(routertest.Local("local", 4096), routertest.Remote("lan", 0, routertest.Reply("ok", 10, 1)), routertest.Remote("claude", 0)), router.Options{Strategy: router.Balanced})
	for b.Loop() {
		s, _ := r.Chat(context.Background(), hi)
		llm.Collect(s)
	}
}

// A local model busy past the budget is a capacity problem; a local model
// not named "local" shows its name.
func TestQueueBudgetInAllFail(t *testing.T) {
	hold := make(chan struct{})
	defer close(hold)
	board := routertest.Local("board", 4096, routertest.Step{Hold: hold})
	down := routertest.Remote("lan", 0, routertest.Fail(fmt.Errorf("refused: %w", llm.ErrUnavailable)), routertest.Reply("up again", 1, 1))
	r := newRouter(t, []router.Entry{{Provider: board}, {Provider: down}}, router.Options{LocalQueueBudget: time.Millisecond})
	busy, err := r.Chat(context.Background(), hi)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	_, _, err = chat(t, context.Background(), r, hi)
	if !errors.Is(err, llm.ErrCapacity) || !errors.Is(err, llm.ErrUnavailable) ||
		err.Error() != "router: no model could answer: board: capacity exceeded (busy: queue wait over the 1ms budget); lan: refused: model unavailable" {
		t.Errorf("error %v", err)
	}
	busy.Close()
	r2 := newRouter(t, []router.Entry{{Provider: routertest.Local("board", 4096)}}, router.Options{})
	if _, f := mustChat(t, r2, hi); f.Route != "local-first: local board" {
		t.Errorf("route %q", f.Route)
	}
}
