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

	mu      sync.Mutex
	eng     *engine
	running uint64        // ID of the generation in progress, 0 if none
	cancel  chan struct{} // closed to stop it
	done    sync.WaitGroup
}

func newServer(w io.Writer) *server { return &server{out: wire.NewWriter(w)} }

func (s *server) serve(r io.Reader) error {
	defer s.done.Wait()
	for {
		var req wire.Request
		if err := wire.Read(r, &req); err != nil {
			if errors.Is(err, io.EOF) {
				s.stopGeneration()
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
		h := &wire.Health{Busy: s.running != 0}
		if s.eng != nil {
			h.Loaded, h.Model = true, s.eng.path
		}
		s.reply(req.ID, wire.Response{Type: wire.TypeOK, Health: h})
	case wire.OpLoad:
		if req.Load == nil {
			return errors.New("load: missing parameters")
		}
		if s.running != 0 {
			return errors.New("load: a generation is running")
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
		if s.running != 0 {
			return fmt.Errorf("generate: busy with request %d", s.running)
		}
		s.running, s.cancel = req.ID, make(chan struct{})
		s.done.Add(1)
		go s.generate(req.ID, *req.Generate, s.cancel)
	case wire.OpCancel:
		if req.Cancel != nil && req.Cancel.Target == s.running && s.running != 0 {
			close(s.cancel)
			s.eng.ctx.Cancel()
			s.running = 0 // the generation still sends its own "done" with reason cancelled
		}
		s.reply(req.ID, wire.Response{Type: wire.TypeOK})
	case wire.OpStats:
		if s.eng == nil {
			return errors.New("stats: no model loaded")
		}
		st := s.eng.stats
		st.KVTokens = len(s.eng.cached)
		s.reply(req.ID, wire.Response{Type: wire.TypeOK, Stats: &st})
	default:
		return fmt.Errorf("unknown op %q", req.Op)
	}
	return nil
}

func (s *server) generate(id uint64, g wire.Generate, cancel chan struct{}) {
	defer s.done.Done()
	done, err := s.eng.generate(g, cancel, func(t wire.Token) { s.reply(id, wire.Response{Type: wire.TypeToken, Token: &t}) })
	s.mu.Lock()
	if s.running == id {
		s.running = 0
	}
	s.mu.Unlock()
	if err != nil {
		s.reply(id, wire.Response{Type: wire.TypeError, Error: err.Error()})
		return
	}
	s.reply(id, wire.Response{Type: wire.TypeDone, Done: done})
}

// stopGeneration cancels whatever runs, for shutdown.
func (s *server) stopGeneration() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running != 0 {
		close(s.cancel)
		s.eng.ctx.Cancel()
		s.running = 0
	}
}
