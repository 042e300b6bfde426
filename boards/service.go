package boards

// This file: the boards' part of a running daemon: this board's identity,
// its paired boards, its A2A server (when it listens) and the paired
// boards' tools in its registry, kept up to date by a prober.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Service is this board among others.
type Service struct {
	// Name is this board's name, the principal board:NAME on the others.
	Name string
	// Listen is the A2A server's host:port ("": serve nothing).
	Listen string
	// URL is where the others reach it ("": https://<listen>).
	URL string
	// Timeout bounds one call to another board.
	Timeout time.Duration
	// ProbeEvery is how often a paired board is asked for its tools
	// (default 5s): how soon one that came back is used again.
	ProbeEvery time.Duration
	// Discover announces this board and finds others by DNS-SD.
	Discover bool
	// DiscoverEvery is how often the LAN is asked (default 30s).
	DiscoverEvery time.Duration
	// Runner runs the others' calls here, and its registry holds theirs.
	Runner *tools.Runner
	// Offered reports whether the policy offers tool to caller: a paired
	// board is shown only the tools it may call.
	Offered func(caller tools.Caller, tool string) bool
	// Turn answers a message of free text from the board who with a model
	// turn on this board (the daemon's agent), its calls audited by audit;
	// nil: this board has no model, and takes commands only.
	Turn func(ctx context.Context, who string, audit tools.Auditor, text string) (string, error)
	// Version is this board's, on its card.
	Version string
	Log     *slog.Logger

	kv    DeleteKV
	id    *Identity
	peers *Peers
	tasks *taskStore
	calls *calls

	mu      sync.Mutex
	disc    discovery
	remotes map[string]*remote // by peer name
	wakeC   chan struct{}
	srv     *http.Server
	ln      net.Listener
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// Open reads this board's identity and its paired boards from kv, and
// registers the tools they last had (listed as unavailable until they
// answer). It serves and probes nothing until Start.
func Open(kv DeleteKV, s *Service) (*Service, error) {
	var err error
	if s.id, err = LoadIdentity(kv); err != nil {
		return nil, err
	}
	if s.peers, err = OpenPeers(kv, nil); err != nil {
		return nil, err
	}
	s.kv, s.tasks, s.calls = kv, &taskStore{kv: kv}, &calls{kv: kv}
	if s.Timeout <= 0 {
		s.Timeout = 10 * time.Second
	}
	if s.DiscoverEvery <= 0 {
		s.DiscoverEvery = 30 * time.Second
	}
	if s.ProbeEvery <= 0 {
		s.ProbeEvery = 5 * time.Second
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	s.remotes, s.wakeC = map[string]*remote{}, make(chan struct{}, 1)
	s.disc.now = make(chan struct{}, 1)
	if s.Runner != nil {
		for _, p := range s.peers.List() {
			s.remoteOf(p.Name).restore(s)
		}
	}
	return s, nil
}

// Identity is this board's key and certificate.
func (s *Service) Identity() *Identity { return s.id }

// Peers are the paired boards.
func (s *Service) Peers() *Peers { return s.peers }

// Addr is the listener's address (after Start, when listening).
func (s *Service) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// CardURL is where this board's A2A server is reached.
func (s *Service) CardURL() string {
	if s.URL != "" {
		return s.URL
	}
	if s.ln != nil {
		return "https://" + s.ln.Addr().String()
	}
	return ""
}

// Start serves A2A (when Listen is set), marks the calls a restart
// interrupted as unknown, and probes the paired boards.
func (s *Service) Start(ctx context.Context) error {
	if n := s.calls.recover(ctx, s.tasks); n > 0 {
		s.Log.Warn(fmt.Sprintf("boards: %d call(s) from other boards were interrupted by a restart; their outcome is unknown and they are not run again", n))
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.cancel = cancel
	if s.Listen != "" {
		ln, err := net.Listen("tcp", s.Listen)
		if err != nil {
			cancel()
			return fmt.Errorf("boards.listen: %w", err)
		}
		s.ln = ln
		s.srv = s.server()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.srv.ServeTLS(limitListener(ln, maxConns), "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.Log.Error("boards: serving: " + err.Error())
			}
		}()
	}
	if s.Discover {
		if s.ln != nil {
			if err := s.announce(life); err != nil {
				s.Log.Warn("boards: not announced on the LAN: " + err.Error())
			}
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.browse(life)
		}()
	}
	if s.Runner != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.probeLoop(life)
		}()
	}
	return nil
}

// Stop ends the server and the prober and waits for them.
func (s *Service) Stop(ctx context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	if s.srv != nil {
		if s.srv.Shutdown(ctx) != nil {
			s.srv.Close() // out of time: the connections still open are cut
		}
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shown reports whether tool is one another board may see: this board's
// own (another board's is not relayed), and none that changes who may act
// on it (tools.BoardOnly: a person at the board or an owner only).
func (s *Service) shown(tool string) bool {
	if ns, _, _ := cutNS(tool); containsDot(ns) {
		return false
	}
	t, err := s.Runner.Registry.Lookup(tool)
	if err != nil {
		return false
	}
	_, boardOnly := t.(tools.BoardOnly)
	return !boardOnly
}

// offered are the specs of this board's own tools offered to the board who.
func (s *Service) offered(who string) []grammar.ToolSpec {
	var out []grammar.ToolSpec
	caller := tools.Caller{Channel: "board", User: who, Actor: tools.Program}
	for _, spec := range s.Runner.Registry.Specs() {
		if !s.shown(spec.Name) {
			continue
		}
		if s.Offered == nil || s.Offered(caller, spec.Name) {
			out = append(out, spec)
		}
	}
	return out
}
