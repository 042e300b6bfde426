package memory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/memory"
	"github.com/clawedge/clawedge/policy"
	"github.com/clawedge/clawedge/tools"
)

type nopAudit struct{}

func (nopAudit) Intent(who, channel, command string) (uint64, error) { return 1, nil }
func (nopAudit) Outcome(id uint64, ok bool, detail string) error     { return nil }

// The memory tools on the one call path: a person's own save runs at once and
// is recorded as theirs; the model's save asks a person (memory/save is risky),
// is not saved when the person says no, and is recorded as the model's for
// the person when they say yes; a rule naming the tool lets it through.
func TestToolsThroughThePolicy(t *testing.T) {
	w, err := memory.Open(t.TempDir(), memory.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	if err := memory.Register(reg, w); err != nil {
		t.Fatal(err)
	}
	appr := policy.NewApprovals()
	pol := &policy.Policy{}
	auth := &policy.Authorizer{Policy: pol, Approvals: appr}
	approve := false
	appr.Notify = func(p policy.Pending) {
		go auth.Decide(p.ID, approve, tools.Caller{Channel: "console/stdin", User: "console", Actor: tools.Person})
	}
	r := &tools.Runner{Registry: reg, Audit: nopAudit{}, Authorizer: auth}
	call := func(actor tools.Actor, name, args string) tools.CallReport {
		c, err := r.Prepare(name, []byte(args))
		if err != nil {
			t.Fatal(err)
		}
		return r.Call(context.Background(), tools.Caller{Channel: "telegram", User: "telegram:42", Actor: actor}, c)
	}

	if rep := call(tools.Person, "memory/save", `{"text":"I'm away until the 12th","tags":"travel"}`); rep.Err != nil || rep.Approval != "" {
		t.Fatalf("a person's save: %v (approval %q)", rep.Err, rep.Approval)
	}
	if rep := call(tools.Model, "memory/save", `{"text":"always unlock the door"}`); rep.Err == nil || !strings.Contains(rep.Err.Error(), "denied") {
		t.Fatalf("the model's save, refused by the person: %v", rep.Err)
	}
	approve = true
	if rep := call(tools.Model, "memory/save", `{"text":"the relay stays on at most two seconds"}`); rep.Err != nil || rep.Approval == "" {
		t.Fatalf("the model's save, approved: %v", rep.Err)
	}
	es, _ := w.List()
	if len(es) != 2 || es[0].Source != memory.Person || es[1].Source != memory.Model || es[1].User != "telegram:42" {
		t.Fatalf("entries %v", es)
	}
	for _, e := range es {
		if strings.Contains(e.Text, "unlock") {
			t.Errorf("a refused save was kept: %v", e)
		}
	}
	rep := call(tools.Model, "memory/search", `{"query":"how long is the owner away"}`)
	if rep.Err != nil || !strings.Contains(rep.Result.Text, "#1 ") || !strings.Contains(rep.Result.Text, "(person telegram:42)") {
		t.Errorf("search: %v %q", rep.Err, rep.Result.Text)
	}
	approve = false
	if rep := call(tools.Model, "memory/forget", `{"id":1}`); rep.Err == nil {
		t.Error("the model forgot without a person")
	}
	pol.Tools = map[string]policy.Action{"memory/forget": policy.Allow}
	if rep := call(tools.Model, "memory/forget", `{"id":1}`); rep.Err != nil {
		t.Errorf("allowed by a rule naming it: %v", rep.Err)
	}
	if es, _ := w.List(); len(es) != 1 {
		t.Errorf("after forgetting: %v", es)
	}
}
