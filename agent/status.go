package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/store"
)

// Totals counts model use since the start, per provider and model: what `clawedge
// status` shows. A router fills Final.Route; its reasons are counted as they come.
type Totals struct {
	mu sync.Mutex
	m  map[string]*ModelTotals
}

// ModelTotals is one provider/model's use.
type ModelTotals struct {
	Provider         string         `json:"provider"`
	Model            string         `json:"model,omitempty"`
	Calls            int            `json:"calls"`
	Failures         int            `json:"failures,omitempty"`
	PromptTokens     int            `json:"prompt_tokens"`
	CompletionTokens int            `json:"completion_tokens"`
	Cost             float64        `json:"cost,omitempty"`
	Latency          time.Duration  `json:"latency_ns"` // summed; Latency/Calls is the mean
	Routes           map[string]int `json:"routes,omitempty"`
}

func newTotals() *Totals { return &Totals{m: map[string]*ModelTotals{}} }

func (t *Totals) entry(provider, model string) *ModelTotals {
	k := provider + "\x00" + model
	e := t.m[k]
	if e == nil {
		e = &ModelTotals{Provider: provider, Model: model}
		t.m[k] = e
	}
	return e
}

func (t *Totals) add(name string, f *llm.Final, d time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	p := f.Provider
	if p == "" {
		p = name
	}
	e := t.entry(p, f.Model)
	e.Calls++
	e.PromptTokens += f.Usage.PromptTokens
	e.CompletionTokens += f.Usage.CompletionTokens
	e.Cost += f.Cost
	e.Latency += d
	if f.Route != "" {
		if e.Routes == nil {
			e.Routes = map[string]int{}
		}
		// The reason without its figures ("prompt 9,120 tokens > window 4,096"), so
		// that the counts add up by kind of reason.
		why, _, _ := strings.Cut(f.Route, " (")
		e.Routes[why]++
	}
}

func (t *Totals) fail(name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entry(name, "").Failures++
}

// List returns the totals sorted by provider and model.
func (t *Totals) List() []ModelTotals {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]ModelTotals, 0, len(t.m))
	for _, e := range t.m {
		c := *e
		if e.Routes != nil {
			c.Routes = make(map[string]int, len(e.Routes))
			for k, v := range e.Routes {
				c.Routes[k] = v
			}
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Model < out[j].Model
	})
	return out
}

// SessionInfo is one session as `clawedge status` shows it.
type SessionInfo struct {
	Channel  string    `json:"channel"`
	User     string    `json:"user"`
	State    State     `json:"state"`
	Turns    int       `json:"turns"`
	LastStop string    `json:"last_stop,omitempty"`
	Tokens   int       `json:"tokens,omitempty"`
	Cost     float64   `json:"cost,omitempty"`
	Updated  time.Time `json:"updated"`
	Notice   string    `json:"notice,omitempty"`
}

// Status is the agent's part of `clawedge status`.
type Status struct {
	Provider  string           `json:"provider"`
	Sessions  []SessionInfo    `json:"sessions"`
	Models    []ModelTotals    `json:"models"`
	Approvals []policy.Pending `json:"approvals"`
}

// Status reports the sessions (from the store, so idle ones count too), the model
// totals and the calls waiting for approval.
func (a *Agent) Status() (Status, error) {
	st := Status{Provider: a.opt.Provider.Name(), Models: a.totals.List(), Approvals: a.appr.List()}
	seen := map[string]bool{}
	a.mu.Lock()
	live := make([]*session, 0, len(a.byKey))
	for _, s := range a.byKey {
		live = append(live, s)
	}
	a.mu.Unlock()
	for _, s := range live {
		// A session mid-turn is read without its lock: its record may be a transition
		// old, which is fine for a status line (and never blocks on an approval).
		seen[s.key] = true
		st.Sessions = append(st.Sessions, info(s.recSnapshot()))
	}
	if a.opt.Store != nil {
		err := a.opt.Store.Sessions(func(key string, data []byte) error {
			if seen[key] {
				return nil
			}
			var r record
			if json.Unmarshal(data, &r) == nil {
				st.Sessions = append(st.Sessions, info(r))
			}
			return nil
		})
		if err != nil {
			return st, err
		}
	}
	sort.Slice(st.Sessions, func(i, j int) bool { return st.Sessions[i].Updated.After(st.Sessions[j].Updated) })
	return st, nil
}

// StoredSessions reads the sessions of a store that no agent is running on (for
// `clawedge status` without a daemon).
func StoredSessions(s *store.Store) ([]SessionInfo, error) {
	var out []SessionInfo
	err := s.Sessions(func(key string, data []byte) error {
		var r record
		if json.Unmarshal(data, &r) == nil {
			out = append(out, info(r))
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, err
}

func info(r record) SessionInfo {
	si := SessionInfo{Channel: r.Channel, User: r.User, State: r.State, Turns: r.Turns, Tokens: r.Tokens,
		Cost: r.Cost, Updated: r.Updated, Notice: r.Notice}
	if r.Turn != nil {
		si.LastStop = r.Turn.Stop
	}
	return si
}

// recSnapshot is the record as of its last transition: a turn in progress holds the
// session's lock (perhaps for minutes, waiting for an approval), so status reads the
// copy each transition publishes instead.
func (s *session) recSnapshot() record {
	s.snapMu.Lock()
	defer s.snapMu.Unlock()
	if s.snap.State == "" { // never published: loaded, not used since
		s.snap = publishable(s.rec)
	}
	return s.snap
}

// publish copies the record's status fields for recSnapshot. Called with s.mu held.
func (s *session) publish() {
	s.snapMu.Lock()
	s.snap = publishable(s.rec)
	s.snapMu.Unlock()
}

func publishable(r record) record {
	out := r
	out.Turn = nil
	if r.Turn != nil {
		out.Turn = &turnRecord{Stop: r.Turn.Stop}
	}
	return out
}

// Recover is run once at start, before the first message and after the store has
// marked unfinished audit intents interrupted: every session found mid-turn is halted
// and given a notice for its next message saying what had happened. No call is ever
// run again; a turn with no call started is re-run only if the same message comes
// again (a channel redelivering what it had not finished). It returns the notices.
func (a *Agent) Recover() ([]string, error) {
	if a.opt.Store == nil {
		return nil, nil
	}
	var notices []string
	err := a.opt.Store.Sessions(func(key string, data []byte) error {
		var r record
		if err := json.Unmarshal(data, &r); err != nil {
			a.log.Warn("agent: a session record does not decode; it is left as is", "session", printableKey(key), "err", err)
			return nil
		}
		if !r.State.Busy() {
			return nil
		}
		s, err := a.session(key)
		if err != nil {
			return err
		}
		defer a.release(s)
		s.mu.Lock()
		defer s.mu.Unlock()
		notice := a.interruptedNotice(&s.rec)
		if !slices.Contains(a.opt.Redelivers, s.rec.Channel) {
			s.rec.Notice = notice
		}
		if s.rec.Turn != nil {
			s.rec.Turn.Stop = "restart"
		}
		s.rec.State = Halted
		s.publish()
		if err := a.save(s, false); err != nil {
			return err
		}
		notices = append(notices, printableKey(key)+": "+notice)
		return nil
	})
	return notices, err
}

// interruptedNotice says what a restart interrupted, from the session's record and the
// audit trail.
func (a *Agent) interruptedNotice(r *record) string {
	what := "your previous request"
	if r.Turn != nil && r.Turn.Text != "" {
		what = fmt.Sprintf("your previous request (%q)", oneLine(r.Turn.Text, 80))
	}
	var started, done []string
	if r.Turn != nil {
		for _, c := range r.Turn.Calls {
			switch c.Status {
			case callStarted:
				desc := c.Call
				if c.Audit != 0 {
					if es, err := a.opt.Store.AuditEntries([]uint64{c.Audit}); err == nil && len(es) == 1 && es[0].Done && !es[0].Interrupted {
						done = append(done, fmt.Sprintf("%s (%s)", c.Call, map[bool]string{true: "ok", false: "failed"}[es[0].OK]))
						continue
					}
				}
				started = append(started, desc)
			case callOK, callFailed:
				done = append(done, fmt.Sprintf("%s (%s)", c.Call, c.Status))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Note: clawedge restarted while handling %s", what)
	switch {
	case len(started) > 0:
		fmt.Fprintf(&b, "; it was interrupted after starting %s, whose effect is unknown. It was not repeated", strings.Join(started, ", "))
	case r.State == NeedsApproval:
		b.WriteString("; it was waiting for an approval, which was cancelled. Nothing waiting was run")
	default:
		b.WriteString("; it was interrupted before any further call started. Nothing was repeated")
	}
	if len(done) > 0 {
		fmt.Fprintf(&b, " (already done: %s)", strings.Join(done, ", "))
	}
	b.WriteString(".")
	return b.String()
}

func sortStrings(s []string) { sort.Strings(s) }

func strconvQuote(s string) string { return strconv.Quote(s) }

// StepLines renders model-step records (store.StepsTail) one per line, for
// `clawedge audit --steps`:
//
//	#7 2026-11-21T12:00:00Z console/stdin pi turn 3 step 1 router:local (local-first: local) in 4,213 B sha256 3fa2c1d0… 300+20 tokens -> calls gpio/write: "Switching it on."
func StepLines(recs []store.StepRecord) []string {
	out := make([]string, 0, len(recs))
	for _, r := range recs {
		var s stepRecord
		if err := json.Unmarshal(r.Data, &s); err != nil {
			out = append(out, fmt.Sprintf("#%d (does not decode: %v)", r.ID, err))
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "#%d %s %s turn %d step %d %s", r.ID, s.Time.Format(time.RFC3339), s.Session, s.Turn, s.Step, s.Provider)
		if s.Model != "" {
			b.WriteString("/" + s.Model)
		}
		if s.Route != "" {
			b.WriteString(" (" + s.Route + ")")
		}
		sum := s.InSHA256
		if len(sum) > 12 {
			sum = sum[:12] + "…"
		}
		fmt.Fprintf(&b, " in %d B sha256 %s", s.InBytes, sum)
		if s.Usage != nil {
			fmt.Fprintf(&b, " %d+%d tokens", s.Usage.PromptTokens, s.Usage.CompletionTokens)
		}
		b.WriteString(" ->")
		var names []string
		for _, c := range s.Calls {
			names = append(names, c.Name)
		}
		if len(names) > 0 {
			b.WriteString(" calls " + strings.Join(names, ", ") + ":")
		}
		b.WriteString(" " + strconvQuote(oneLine(s.Out, 160)))
		out = append(out, b.String())
	}
	return out
}
