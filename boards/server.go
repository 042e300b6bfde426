package boards

// This file: the A2A server. Over TLS with this board's pinned certificate;
// a client certificate is asked for but not required, so that anyone may
// read the card (what the board is, what it can do, how to authenticate)
// and a board with a code may pair. Everything else needs the certificate
// of a paired board: a stranger gets the card at most.

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
	"golang.org/x/net/netutil"
)

// Bounds of the server.
const (
	maxConns   = 32       // connections at once
	maxBody    = 64 << 10 // bytes of a request
	maxHeaders = 16 << 10
)

// Paths of the server besides the A2A ones.
const (
	CardPath   = "/.well-known/agent-card.json"
	PairPath   = "/clawedge/pair"
	UnpairPath = "/clawedge/unpair"
	ToolsPath  = "/clawedge/tools"
	RPCPath    = "/a2a"
)

func limitListener(ln net.Listener, n int) net.Listener { return netutil.LimitListener(ln, n) }

type peerKey struct{}

func (s *Service) server() *http.Server {
	handler := a2asrv.NewHandler(executor{s},
		a2asrv.WithTaskStore(s.tasks),
		a2asrv.WithCallInterceptors(authInterceptor{}),
		a2asrv.WithLogger(s.Log), // the daemon's log, not the process's default
	)
	mux := http.NewServeMux()
	mux.Handle("GET "+CardPath, a2asrv.NewAgentCardHandler(a2asrv.AgentCardProducerFn(s.card)))
	mux.HandleFunc("POST "+PairPath, s.handlePair)
	mux.Handle("POST "+UnpairPath, s.paired(http.HandlerFunc(s.handleUnpair)))
	mux.Handle("GET "+ToolsPath, s.paired(http.HandlerFunc(s.handleTools)))
	mux.Handle("POST "+RPCPath, s.paired(a2asrv.NewJSONRPCHandler(handler)))
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Body = http.MaxBytesReader(w, r.Body, maxBody)
			mux.ServeHTTP(w, r)
		}),
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{s.id.Cert},
			MinVersion:   tls.VersionTLS13,
			// Asked, not required: the card is public. Its chain is not
			// checked either: a paired board is known by its pin alone.
			ClientAuth: tls.RequestClientCert,
		},
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      s.Timeout + 15*time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    maxHeaders,
		ErrorLog:          nil,
	}
}

// clientPin is the pin of the connection's client certificate ("": none).
func clientPin(r *http.Request) string {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return ""
	}
	return PinOf(r.TLS.PeerCertificates[0].Raw)
}

// paired lets through the requests of paired boards only, with the board
// in the context; a stranger is told 401 and nothing else.
func (s *Service) paired(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pin := clientPin(r)
		peer, ok := s.peers.ByPin(pin)
		if pin == "" || !ok {
			http.Error(w, "not a paired board: pair first (clawedge board pair on this board, clawedge board add on yours)", http.StatusUnauthorized)
			return
		}
		s.peers.Seen(peer.Name)
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), peerKey{}, peer.Name)))
	})
}

// authInterceptor names the A2A call's user after the paired board the
// connection proved to be: board:NAME, the principal its calls run as.
type authInterceptor struct {
	a2asrv.PassthroughCallInterceptor
}

func (authInterceptor) Before(ctx context.Context, cc *a2asrv.CallContext, req *a2asrv.Request) (context.Context, any, error) {
	name, ok := ctx.Value(peerKey{}).(string)
	if !ok {
		return ctx, nil, a2a.ErrUnauthenticated
	}
	cc.User = a2asrv.NewAuthenticatedUser("board:"+name, nil)
	return ctx, nil, nil
}

// card is this board's agent card: its name, its tools as skills, and how
// to authenticate (mutual TLS with the certificate pinned at pairing).
func (s *Service) card(ctx context.Context) (*a2a.AgentCard, error) {
	card := &a2a.AgentCard{
		Name:        s.Name,
		Description: "clawedge board " + s.Name + ": its tools, called as commands (@ns/tool{...}) by paired boards, and its assistant for free text when it has a model",
		Version:     s.Version,
		SupportedInterfaces: []*a2a.AgentInterface{
			a2a.NewAgentInterface(strings.TrimSuffix(s.CardURL(), "/")+RPCPath, a2a.TransportProtocolJSONRPC),
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		SecuritySchemes: a2a.NamedSecuritySchemes{
			"paired": a2a.MutualTLSSecurityScheme{Description: "the client certificate pinned at pairing (" + PairPath + " with a one-time code from `clawedge board pair`); this board's certificate SHA-256 is " + s.id.Pin},
		},
		SecurityRequirements: a2a.SecurityRequirementsOptions{{"paired": {}}},
		Skills:               []a2a.AgentSkill{},
	}
	if s.Runner != nil {
		for _, spec := range s.Runner.Registry.Specs() {
			if !s.shown(spec.Name) {
				continue
			}
			card.Skills = append(card.Skills, a2a.AgentSkill{ID: spec.Name, Name: spec.Name, Description: spec.Doc,
				Tags: []string{"tool"}, Examples: []string{"@" + spec.Name + "{}"}})
		}
	}
	return card, nil
}

// PairRequest is what a board redeeming a code sends.
type PairRequest struct {
	Name  string `json:"name"`
	URL   string `json:"url,omitempty"`
	Proof string `json:"proof"` // ProofHex(code, "a", its pin, this board's pin, Name)
}

// PairAnswer is what it is answered.
type PairAnswer struct {
	Name  string `json:"name"`
	Proof string `json:"proof"` // ProofHex(code, "b", ...): this board knew the code too
}

func (s *Service) handlePair(w http.ResponseWriter, r *http.Request) {
	pin := clientPin(r)
	var req PairRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "a pairing request is JSON {name, url, proof}", http.StatusBadRequest)
		return
	}
	proof, err := hex.DecodeString(req.Proof)
	switch {
	case pin == "":
		http.Error(w, "pairing needs the board's client certificate", http.StatusBadRequest)
		return
	case !validName(req.Name):
		http.Error(w, "name: a lower-case letter, then lower-case letters, digits, _ and -, at most 32", http.StatusBadRequest)
		return
	case req.URL != "" && !validURL(req.URL):
		http.Error(w, "url: an https://host:port URL", http.StatusBadRequest)
		return
	case err != nil || len(proof) != 32:
		http.Error(w, "proof: 64 hex digits", http.StatusBadRequest)
		return
	}
	code, err := s.peers.Redeem(proof, pin, s.id.Pin, Peer{Name: req.Name, URL: req.URL})
	var cd *CooldownError
	switch {
	case errors.As(err, &cd):
		w.Header().Set("Retry-After", cd.Until.UTC().Format(http.TimeFormat))
		http.Error(w, err.Error(), http.StatusTooManyRequests)
		return
	case errors.Is(err, ErrWrongCode):
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	s.Log.Info("boards: paired with board:" + req.Name)
	if req.URL != "" {
		s.remoteOf(req.Name).wake()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(PairAnswer{Name: s.Name, Proof: ProofHex(code, "b", pin, s.id.Pin, req.Name)})
}

// handleUnpair: the paired board unpaired this one; it is forgotten here too.
func (s *Service) handleUnpair(w http.ResponseWriter, r *http.Request) {
	name := r.Context().Value(peerKey{}).(string)
	s.forget(name)
	s.Log.Info("boards: board:" + name + " unpaired itself")
	w.WriteHeader(http.StatusNoContent)
}

// handleTools answers the specs of the tools the policy offers the board;
// with the ETag of what it has, 304 and nothing else when they are the same
// (a probe every few seconds is then a few hundred bytes).
func (s *Service) handleTools(w http.ResponseWriter, r *http.Request) {
	name := r.Context().Value(peerKey{}).(string)
	body, _ := json.Marshal(s.offered("board:" + name))
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	w.Header().Set("ETag", etag)
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}
