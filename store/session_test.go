package store

import (
	"bytes"
	"strings"
	"testing"
)

func TestSessions(t *testing.T) {
	dir := t.TempDir()
	s := openT(t, dir)
	// Nothing stored yet: an old file without the buckets reads as empty.
	if _, _, found, err := s.LoadSession("console/stdin\x00pi"); found || err != nil {
		t.Fatal(found, err)
	}
	if err := s.SaveSession("console/stdin\x00pi", []byte(`{"state":"PLANNING"}`), []byte(`{"messages":[]}`)); err != nil {
		t.Fatal(err)
	}
	// nil history keeps the stored one.
	if err := s.SaveSession("console/stdin\x00pi", []byte(`{"state":"IDLE"}`), nil); err != nil {
		t.Fatal(err)
	}
	s.SaveSession("telegram\x00telegram:1", []byte(`{"state":"HALTED"}`), nil)
	st, h, found, err := s.LoadSession("console/stdin\x00pi")
	if err != nil || !found || string(st) != `{"state":"IDLE"}` || string(h) != `{"messages":[]}` {
		t.Fatalf("%s %s %v %v", st, h, found, err)
	}
	var keys []string
	s.Sessions(func(k string, state []byte) error { keys = append(keys, k+"="+string(state)); return nil })
	if strings.Join(keys, ",") != `console/stdin`+"\x00"+`pi={"state":"IDLE"},telegram`+"\x00"+`telegram:1={"state":"HALTED"}` {
		t.Errorf("%q", keys)
	}
	if err := s.DeleteSession("telegram\x00telegram:1"); err != nil {
		t.Fatal(err)
	}
	if _, _, found, _ := s.LoadSession("telegram\x00telegram:1"); found {
		t.Error("deleted session found")
	}
	if s.SaveSession("", nil, nil) == nil || s.SaveSession("k", bytes.Repeat([]byte("x"), MaxSessionRecord+1), nil) == nil {
		t.Error("bad key or oversized record accepted")
	}
	// Durable across a reopen, and readable read-only.
	s.Close()
	ro, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if st, _, found, _ := ro.LoadSession("console/stdin\x00pi"); !found || string(st) != `{"state":"IDLE"}` {
		t.Errorf("after reopen: %s %v", st, found)
	}
}

func TestSteps(t *testing.T) {
	s := openT(t, t.TempDir())
	if got, err := s.StepsSince(0, 0); err != nil || len(got) != 0 {
		t.Fatal(got, err)
	}
	for i := range 5 {
		id, err := s.RecordStep([]byte{byte('a' + i)})
		if err != nil || id != uint64(i+1) {
			t.Fatal(id, err)
		}
	}
	got, _ := s.StepsSince(2, 2)
	if len(got) != 2 || got[0].ID != 3 || string(got[1].Data) != "d" {
		t.Errorf("%+v", got)
	}
	if got, _ := s.StepsSince(^uint64(0), 0); len(got) != 0 {
		t.Errorf("after max: %+v", got)
	}
	if _, err := s.RecordStep(make([]byte, MaxStepRecord+1)); err == nil {
		t.Error("oversized step accepted")
	}
}
