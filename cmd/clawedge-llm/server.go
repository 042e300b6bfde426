//go:build llamacpp

package main

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/clawedge/clawedge/localmodel/wire"
)

// server reads requests and answers them. Generation runs in its own goroutine
// so that cancel, stats and health are answered while it runs.
type server struct {
	out *wire.Writer

	mu  sync.Mutex
	eng *engine
	gen *generation // the latest generation, finished or not; nil if none
}

// generation is one generate request in progress. A cancelled generation
// winds down on its own (it still sends "done" with reason cancelled); the
// next generation waits for it before touching the engine.
type generation struct {
	id        uint64
	cancel    chan struct{} // closed by cancel
	cancelled bool
	idle      chan struct{} // closed when it no longer uses the engine, before its last response
	finished  chan struct{} // closed when it has sent its last response
}

// busy reports the generation that a new generate or load must not overlap.
func (s *server) busy() *generation {
	if s.gen != nil && !s.gen.cancelled && !isClosed(s.gen.idle) {
		return s.gen
	}
	return nil
}

func newServer(w io.Writer) *server { return &server{out: wire.NewWriter(w)} }

func (s *server) serve(r io.Reader) error {
	defer s.wait()
	for {
		var req wire.Request
		if err := wire.Read(r, &req); err != nil {
			s.stopGeneration()
			if errors.Is(err, io.EOF) {
				return nil // the core closed our stdin: it wants us gone
			}
			return err
		}
		if err := s.handle(req); err != nil {
			s.reply(req.ID, wire.Response{Type: wire.TypeError, Error: err.Error()})
		}
	}
}

func (s *server) reply(id uint64, r wire.Response) {
	r.ID = id
	s.out.Write(r)
}

func (s *server) handle(req wire.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Op {
	case wire.OpHealth:
		h := &wire.Health{Busy: s.busy() != nil}
		if s.eng != nil {
			h.Loaded, h.Model = true, s.eng.path
		}
		s.reply(req.ID, wire.Response{Type: wire.TypeOK, Health: h})
	case wire.OpLoad:
		if req.Load == nil {
			return errors.New("load: missing parameters")
		}
		if g := s.busy(); g != nil {
			return fmt.Errorf("load: busy with generation %d", g.id)
		}
		if s.gen != nil {
			<-s.gen.finished // a cancelled one, winding down: it never takes s.mu
		}
		if s.eng != nil {
			s.eng.close()
			s.eng = nil
		}
		eng, err := load(*req.Load)
		if err != nil {
			return err
		}
		s.eng = eng
		s.reply(req.ID, wire.Response{Type: wire.TypeOK, Model: eng.info()})
	case wire.OpTokenize:
		if s.eng == nil {
			return errors.New("tokenize: no model loaded")
		}
		if req.Tokenize == nil {
			return errors.New("tokenize: missing parameters")
		}
		toks, err := s.eng.model.Tokenize(req.Tokenize.Text, false, req.Tokenize.Special)
		if err != nil {
			return err
		}
		s.reply(req.ID, wire.Response{Type: wire.TypeOK, Tokens: toks})
	case wire.OpGenerate:
		if s.eng == nil {
			return errors.New("generate: no model loaded")
		}
		if req.Generate == nil {
			return errors.New("generate: missing parameters")
		}
		if g := s.busy(); g != nil {
			return fmt.Errorf("generate: busy with request %d", g.id)
		}
		g := &generation{id: req.ID, cancel: make(chan struct{}), idle: make(chan struct{}), finished: make(chan struct{})}
		prev := s.gen
		s.gen = g
		go s.generate(s.eng, g, prev, *req.Generate)
	case wire.OpCancel:
		if req.Cancel == nil {
			return errors.New("cancel: missing parameters")
		}
		if g := s.busy(); g != nil && g.id == req.Cancel.Target {
			s.cancelLocked()
		}
		s.reply(req.ID, wire.Response{Type: wire.TypeOK})
	case wire.OpStats:
		if s.eng == nil {
			return errors.New("stats: no model loaded")
		}
		st := s.eng.snapshot()
		s.reply(req.ID, wire.Response{Type: wire.TypeOK, Stats: &st})
	default:
		return fmt.Errorf("unknown op %q", req.Op)
	}
	return nil
}

func (s *server) generate(eng *engine, g, prev *generation, req wire.Generate) {
	defer close(g.finished)
	if prev != nil {
		<-prev.finished
	}
	done, err := eng.generate(req, g.cancel, func(t wire.Token) { s.reply(g.id, wire.Response{Type: wire.TypeToken, Token: &t}) })
	close(g.idle) // the client may send the next generate as soon as it reads the answer
	if err != nil {
		s.reply(g.id, wire.Response{Type: wire.TypeError, Error: err.Error()})
		return
	}
	s.reply(g.id, wire.Response{Type: wire.TypeDone, Done: done})
}

// cancelLocked stops the running generation; s.mu is held.
func (s *server) cancelLocked() {
	g := s.gen
	g.cancelled = true
	close(g.cancel)
	s.eng.ctx.Cancel()
}

// stopGeneration cancels whatever runs, for shutdown.
func (s *server) stopGeneration() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy() != nil {
		s.cancelLocked()
	}
}

// wait returns when the last generation has sent its last response and a
// prompt state being saved is on disk.
func (s *server) wait() {
	s.mu.Lock()
	g, eng := s.gen, s.eng
	s.mu.Unlock()
	if g != nil {
		<-g.finished
	}
	if eng != nil && eng.prefix != nil {
		eng.prefix.close()
	}
}
