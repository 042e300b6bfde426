package channels

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ControlSocketName is the control socket's file name inside data_dir.
const ControlSocketName = "clawedge.sock"

// ControlSocket lets local programs (`clawedge exec`, `chat`, `audit`) use the
// running daemon. The daemon holds the store and the GPIO lines, so a second
// process cannot open them; it asks the daemon instead. Access is the socket
// file's permission (0600, in the 0700 data_dir): the daemon's own user.
//
// The protocol is one JSON object per line each way:
//
//	→ {"text": "@gpio/write{pin=\"led\";value=1}", "user": "pi"}
//	← {"reply": "led = 1 (high)", "report": [[{"tool": "gpio/write", "ok": true, ...}]]}
//
// A reply has "failed": true when the line failed. Connections may send many lines.
// An answer produced piece by piece (the agent's) comes first as {"stream": "..."}
// lines, then the reply, whose text then repeats the pieces in full.
type ControlSocket struct {
	Handler Handler
	Path    string
	Log     *slog.Logger
	// Ops answer requests that are not lines: {"op": "status", "arg": ...} is
	// answered {"status": <what Ops["status"] returns>} (`clawedge status`, `audit
	// --steps`).
	Ops map[string]func(arg json.RawMessage) (any, error)
	// Calls are ops that run a call for the client (`clawedge mcp`'s
	// tools/call): like a line's, the call's context ends when the client
	// goes away, which is how a client cancels it, or when the daemon stops.
	// peer is the client's uid as the kernel reports it (SO_PEERCRED): who
	// asks, never what the request says.
	Calls map[string]func(ctx context.Context, peer uint32, arg json.RawMessage) (any, error)
	// Refuse, when set, says why a peer (its pid and uid, from the kernel)
	// may not use the socket at all; the daemon refuses its own sandboxed
	// children (sandbox.Confined), which may run under its uid, and any uid
	// but its own and root's.
	Refuse func(pid int32, uid uint32) error
	// MaxConns bounds the connections served at once (0: DefaultControlConns);
	// one more is answered that the socket is busy, and closed.
	MaxConns int
	// IdleTimeout closes a connection that has sent nothing for this long
	// while no call of its runs (0: DefaultControlIdle); a client that comes
	// back later dials again (ControlClient does so by itself).
	IdleTimeout time.Duration
	// WriteTimeout drops a connection whose client has not taken a reply, or
	// a piece of one, for this long (0: DefaultControlWrite).
	WriteTimeout time.Duration
}

// The control socket's bounds. It is 0600 in a 0700 folder, so only the
// daemon's user can open it; still, a client that dies half way, is stopped
// (Ctrl-Z) or hangs must not hold a goroutine and its buffers forever, nor
// can a runaway script of that user open connections without end.
const (
	DefaultControlConns = 64
	// DefaultControlIdle is long enough for a person thinking at `clawedge
	// chat` (whose client redials anyway), short enough that stuck clients
	// cannot pile up: 64 of them for 5 minutes at most.
	DefaultControlIdle  = 5 * time.Minute
	DefaultControlWrite = time.Minute
)

type controlRequest struct {
	Text string `json:"text"`
	User string `json:"user"`
	// Op, when set, is a request that is not a line (ControlSocket.Ops), with Arg.
	Op  string          `json:"op,omitempty"`
	Arg json.RawMessage `json:"arg,omitempty"`
}

// Listen creates the socket. A socket file left by a daemon that died is
// removed first: only one daemon can hold the store, and the caller holds it.
func (s *ControlSocket) Listen() (net.Listener, error) {
	if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control socket %s: %w", s.Path, err)
	}
	ln, err := net.Listen("unix", s.Path)
	if err != nil {
		return nil, fmt.Errorf("control socket %s: %w", s.Path, err)
	}
	if err := os.Chmod(s.Path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket %s: %w", s.Path, err)
	}
	return ln, nil
}

// Serve answers connections on ln until ctx ends, then removes the socket file.
func (s *ControlSocket) Serve(ctx context.Context, ln net.Listener) error {
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer os.Remove(s.Path)
	slots := make(chan struct{}, cmp.Or(s.MaxConns, DefaultControlConns))
	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Out of descriptors (EMFILE, ENFILE) or memory: the socket must
			// not die of it; wait and try again, as net/http does.
			if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) || errors.Is(err, syscall.ENOBUFS) || errors.Is(err, syscall.ENOMEM) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				log.Warn("control socket: cannot accept; retrying", "err", err, "in", backoff)
				select {
				case <-time.After(backoff):
					continue
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return fmt.Errorf("control socket %s: %w", s.Path, err)
		}
		backoff = 0
		select {
		case slots <- struct{}{}:
		default:
			refuseBusy(conn, cap(slots))
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			defer conn.Close()
			// At a stop the call being answered is cancelled and its client still
			// gets the reply (which says so); a client that does not read it
			// cannot hold the stop up for long.
			unblock := context.AfterFunc(ctx, func() { conn.SetWriteDeadline(time.Now().Add(stopGrace)) })
			defer unblock()
			if err := s.serveConn(ctx, conn); err != nil && ctx.Err() == nil {
				log.Warn("control connection", "err", err)
			}
		})
	}
}

// refuseBusy answers a connection past the cap that the socket is busy, in
// the form of both a line's reply and an op's, and closes it. A fresh
// socket's buffer takes the line at once; the deadline is in case it does not.
func refuseBusy(conn net.Conn, max int) {
	defer conn.Close()
	msg := fmt.Sprintf("the control socket is busy: %d connections are open, the most it serves; try again when one ends", max)
	conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	b, _ := json.Marshal(map[string]any{"reply": "error: " + msg, "failed": true, "error": msg})
	conn.Write(append(b, '\n'))
}

// deadlineWriter bounds each write to a client: one that does not take its
// reply within d (stopGrace once the daemon stops) loses its connection.
type deadlineWriter struct {
	conn net.Conn
	ctx  context.Context
	d    time.Duration
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	d := w.d
	if w.ctx.Err() != nil {
		d = stopGrace
	}
	w.conn.SetWriteDeadline(time.Now().Add(d))
	// The stop may have come between the check and the deadline just set,
	// which would then have replaced the stop's shorter one.
	if d != stopGrace && w.ctx.Err() != nil {
		w.conn.SetWriteDeadline(time.Now().Add(stopGrace))
	}
	return w.conn.Write(p)
}

// MaxControlRequest bounds one request line on the control socket. It is far above
// what a command line can be in its JSON form (the command language stops at
// MaxLineBytes, and the kernel at 128 KiB per argument of `clawedge exec`), so an
// over-long command still reaches the dispatcher and gets the same error as without
// a daemon; a longer request is answered with an error, and the connection stays.
const MaxControlRequest = 1 << 20

// stopGrace is how long a stopping daemon waits for a client to take its reply.
const stopGrace = 2 * time.Second

// ErrClientGone is the cause a call is cancelled with when its control connection
// closes before the answer: the person who asked is no longer waiting (a killed or
// Ctrl-C'd `clawedge exec`), so a `gpio/wait` of an hour must not go on for nobody.
var ErrClientGone = errors.New("cancelled: the client went away")

// controlLine is one request line, or why there is none.
type controlLine struct {
	b       []byte
	tooLong int // > 0: the line had this many bytes and was dropped
	err     error
}

func (s *ControlSocket) serveConn(ctx context.Context, conn net.Conn) error {
	out := json.NewEncoder(deadlineWriter{conn: conn, ctx: ctx, d: cmp.Or(s.WriteTimeout, DefaultControlWrite)})
	out.SetEscapeHTML(false)
	cred, err := peerCred(conn)
	if err == nil && s.Refuse != nil {
		err = s.Refuse(cred.Pid, cred.Uid)
	}
	if err != nil {
		// Nothing of the connection is read: a refused peer sends nothing in.
		out.Encode(Response{Text: "error: control socket refused: " + err.Error(), Failed: true})
		return fmt.Errorf("peer refused: %w", err)
	}
	uid := fmt.Sprint(cred.Uid)
	// The connection is read on its own goroutine so that the call being answered
	// learns at once when the client goes away (EOF or an error), and is cancelled.
	var mu sync.Mutex
	var cancelCall context.CancelCauseFunc
	gone := false
	lines := make(chan controlLine, 4)
	// left ends the reader when this returns with lines it has not taken
	// (the connection is closed then, and the reader must not wait to hand
	// over a line nobody reads).
	left := make(chan struct{})
	defer close(left)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(conn, 4096)
		for {
			l := readControlLine(r, MaxControlRequest)
			if l.err != nil {
				mu.Lock()
				gone = true
				// At shutdown the server closes the connection itself: the call
				// then ends with the daemon's cause, not this one.
				if cancelCall != nil && ctx.Err() == nil {
					cancelCall(ErrClientGone)
				}
				mu.Unlock()
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			case <-left:
				return
			}
			if l.err != nil {
				return
			}
		}
	}()
	idle := time.NewTimer(cmp.Or(s.IdleTimeout, DefaultControlIdle))
	defer idle.Stop()
	for ctx.Err() == nil {
		// The idle time counts from the last reply: a call that runs for an
		// hour (gpio/wait) is not idleness.
		idle.Reset(cmp.Or(s.IdleTimeout, DefaultControlIdle))
		var l controlLine
		select {
		case l = <-lines:
		case <-ctx.Done():
			return nil
		case <-idle.C:
			return nil // closed: the reader goroutine ends with the connection
		}
		if l.err != nil {
			if errors.Is(l.err, io.EOF) {
				return nil
			}
			return l.err
		}
		var req controlRequest
		var resp Response
		if l.tooLong > 0 {
			resp = Response{Text: fmt.Sprintf("error: control request of %d bytes refused: at most %d bytes", l.tooLong, MaxControlRequest), Failed: true}
		} else if err := json.Unmarshal(l.b, &req); err != nil {
			resp = Response{Text: "error: bad control request: " + err.Error(), Failed: true}
		} else if _, isCall := s.Calls[req.Op]; req.Op != "" && !isCall {
			if err := out.Encode(s.op(req.Op, req.Arg)); err != nil {
				return err
			}
			continue
		} else {
			callCtx, cancel := context.WithCancelCause(ctx)
			mu.Lock()
			if gone {
				cancel(ErrClientGone)
			}
			cancelCall = cancel
			mu.Unlock()
			var err error
			var reply any
			if isCall {
				reply = opReply(s.Calls[req.Op](callCtx, cred.Uid, req.Arg))
			} else {
				resp, err = s.respond(callCtx, uid, req, out)
			}
			mu.Lock()
			cancelCall = nil
			mu.Unlock()
			cancel(nil)
			if err != nil {
				return err
			}
			if isCall {
				if err := out.Encode(reply); err != nil {
					mu.Lock()
					defer mu.Unlock()
					if gone {
						return nil // the client cancelled by going; the audit has the outcome
					}
					return err
				}
				continue
			}
		}
		if err := out.Encode(resp); err != nil {
			mu.Lock()
			defer mu.Unlock()
			if gone {
				return nil // nobody is listening; the audit has the outcome
			}
			return err
		}
	}
	return nil
}

// respond answers one line; a streamed answer's pieces go out as they come. The
// error is a failed write of a piece.
func (s *ControlSocket) respond(ctx context.Context, uid string, req controlRequest, out *json.Encoder) (Response, error) {
	// Who asks is what the kernel says (SO_PEERCRED), never what the client
	// says: its "user" field names no one.
	msg := Message{Channel: "control", User: "uid:" + uid, Text: req.Text}
	sh, ok := s.Handler.(StreamHandler)
	if !ok {
		return s.Handler.Respond(ctx, msg), nil
	}
	var werr error
	resp := sh.RespondStream(ctx, msg, func(t string) {
		if werr == nil {
			werr = out.Encode(controlChunk{Stream: &t})
		}
	})
	return resp, werr
}

// readControlLine reads one line of at most max bytes (without its newline). A
// longer one is read to its end and dropped, so the next line is read normally.
func readControlLine(r *bufio.Reader, max int) controlLine {
	var buf []byte
	n := 0
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if n <= max+1 {
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (n == 0 || !errors.Is(err, io.EOF)):
			return controlLine{err: err}
		}
		// A last line without a newline still counts; the EOF comes next call.
		size := n
		if bytes.HasSuffix(chunk, []byte("\n")) {
			size--
		}
		if size > max {
			return controlLine{tooLong: size}
		}
		return controlLine{b: buf[:size]}
	}
}

// op answers a request that is not a line.
func (s *ControlSocket) op(op string, arg json.RawMessage) any {
	f, ok := s.Ops[op]
	if !ok {
		return opReply(nil, fmt.Errorf("unknown control op %q", op))
	}
	return opReply(f(arg))
}

// opReply is the answer to an op: its result or its error.
func opReply(res any, err error) any {
	type reply struct {
		Result any    `json:"result"`
		Error  string `json:"error,omitempty"`
	}
	if err != nil {
		return reply{Error: err.Error()}
	}
	return reply{Result: res}
}

func peerCred(conn net.Conn) (*syscall.Ucred, error) {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return nil, errors.New("not a unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return nil, err
	}
	var cred *syscall.Ucred
	if cerr := raw.Control(func(fd uintptr) {
		cred, err = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); cerr != nil {
		return nil, cerr
	}
	return cred, err
}

// ErrUntrustedPeer matches (errors.Is) DialControl's error for a socket answered
// by a process this user must not trust.
var ErrUntrustedPeer = errors.New("the control socket is not served by a daemon this user trusts")

// SocketPeer is what decides whether to trust the process on a control socket:
// its uid (from the kernel, SO_PEERCRED), the owners of the socket file and of
// its directory (data_dir), and this process's uid.
type SocketPeer struct {
	Path                        string
	Peer, SocketOwner, DirOwner uint32
	Self                        uint32
}

// Check trusts the peer when it owns the socket file and is this user or root;
// root (sudo clawedge exec) also trusts the owner of data_dir. Anyone else could
// have replaced the daemon's socket to read the commands and forge the replies.
func (p SocketPeer) Check() error {
	switch {
	case p.Peer != p.SocketOwner:
		return fmt.Errorf("%w: %s is answered by uid %d but the socket file belongs to uid %d; refusing to send anything (clawedge doctor checks data_dir)",
			ErrUntrustedPeer, p.Path, p.Peer, p.SocketOwner)
	case p.Peer == p.Self, p.Peer == 0, p.Self == 0 && p.Peer == p.DirOwner:
		return nil
	}
	return fmt.Errorf("%w: %s is answered by uid %d, which is neither this user (uid %d) nor root; refusing to send anything. "+
		"Another user may have replaced the daemon's socket: check data_dir (clawedge doctor), or run this as the daemon's user", ErrUntrustedPeer, p.Path, p.Peer, p.Self)
}

// checkPeer applies SocketPeer.Check to a new connection.
func checkPeer(conn net.Conn, path string) error {
	cred, err := peerCred(conn)
	if err != nil {
		return fmt.Errorf("%w: %s: cannot tell who answers it: %v", ErrUntrustedPeer, path, err)
	}
	p := SocketPeer{Path: path, Peer: cred.Uid, Self: uint32(os.Geteuid())}
	for target, file := range map[*uint32]string{&p.SocketOwner: path, &p.DirOwner: filepath.Dir(path)} {
		fi, err := os.Stat(file)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUntrustedPeer, path, err)
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%w: %s: no owner", ErrUntrustedPeer, file)
		}
		*target = st.Uid
	}
	return p.Check()
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ControlClient talks to a running daemon's control socket. It implements
// Handler, so a Console can forward every line to the daemon.
type ControlClient struct {
	conn net.Conn
	in   *bufio.Scanner
	user string
	path string
	mu   sync.Mutex
	// connMu guards conn's replacement (redialIfClosed) against Close, which
	// must not wait for c.mu: it is how a waiting call is ended.
	connMu sync.Mutex
	// closed is set by Close: the connection is not dialed again after it.
	closed bool
}

// controlChunk is a piece of a streamed answer.
type controlChunk struct {
	Stream *string `json:"stream"`
}

// ControlReply is a daemon's answer; Report is the JSON of the calls, if any.
type ControlReply struct {
	Text   string          `json:"reply"`
	Failed bool            `json:"failed"`
	Report json.RawMessage `json:"report"`
	Turn   bool            `json:"turn,omitempty"` // the agent answered (Response.Turn)
	// Stream is set on the pieces of a streamed answer, which come before it.
	Stream *string `json:"stream,omitempty"`
}

// DialControl connects to the daemon at path. An error means no daemon serves it,
// or one this user must not trust (ErrUntrustedPeer): nothing has been sent then.
func DialControl(path, user string) (*ControlClient, error) {
	conn, err := net.Dial("unix", path)
	if err != nil {
		return nil, err
	}
	if err := checkPeer(conn, path); err != nil {
		conn.Close()
		return nil, err
	}
	in := bufio.NewScanner(conn)
	in.Buffer(make([]byte, 4096), 16<<20)
	return &ControlClient{conn: conn, in: in, user: user, path: path}, nil
}

// Send sends one line and waits for the daemon's reply.
func (c *ControlClient) Send(text string) (ControlReply, error) {
	return c.SendStream(text, nil)
}

// SendStream sends one line, passes the pieces of a streamed answer to emit (nil:
// they are skipped; the reply has the whole text), and returns the reply.
func (c *ControlClient) SendStream(text string, emit func(string)) (ControlReply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.redialIfClosed(); err != nil {
		return ControlReply{}, err
	}
	req, _ := json.Marshal(controlRequest{Text: text, User: c.user})
	if _, err := c.conn.Write(append(req, '\n')); err != nil {
		if r, ok := c.refusal(); ok {
			return r, nil
		}
		return ControlReply{}, fmt.Errorf("daemon connection: %w", err)
	}
	for {
		if !c.in.Scan() {
			err := c.in.Err()
			if err == nil {
				err = errors.New("the daemon closed the connection")
			}
			return ControlReply{}, fmt.Errorf("daemon connection: %w", err)
		}
		var r ControlReply
		if err := json.Unmarshal(c.in.Bytes(), &r); err != nil {
			return ControlReply{}, fmt.Errorf("daemon reply: %w", err)
		}
		if r.Stream == nil {
			return r, nil
		}
		if emit != nil {
			emit(*r.Stream)
		}
	}
}

// Respond forwards msg to the daemon (the Handler interface).
func (c *ControlClient) Respond(ctx context.Context, msg Message) Response {
	return c.RespondStream(ctx, msg, nil)
}

// RespondStream forwards msg and streams the answer (the StreamHandler interface).
// An `approve ID` or `deny ID` sent while another line waits for its answer (a turn
// waiting for exactly that approval) goes over a second connection.
func (c *ControlClient) RespondStream(ctx context.Context, msg Message, emit func(string)) Response {
	send := c.SendStream
	if IsApproval(msg.Text) && !c.mu.TryLock() {
		other, err := DialControl(c.path, c.user)
		if err != nil {
			return Response{Text: "error: " + err.Error(), Failed: true}
		}
		defer other.Close()
		send = other.SendStream
	} else if IsApproval(msg.Text) {
		c.mu.Unlock()
	}
	streamed := false
	var e func(string)
	if emit != nil {
		e = func(s string) {
			if s != "" {
				streamed = true
				emit(s)
			}
		}
	}
	r, err := send(msg.Text, e)
	if err != nil {
		return Response{Text: "error: " + err.Error(), Failed: true}
	}
	// A stream that failed part way ends with the error, which is not part of it.
	return Response{Text: r.Text, Failed: r.Failed, Turn: r.Turn, Streamed: streamed && !r.Failed}
}

// Close closes the connection; a call waiting for its reply ends with an
// error (mcpserver.Remote closes it so when its host gives up).
func (c *ControlClient) Close() error {
	c.connMu.Lock()
	c.closed = true
	conn := c.conn
	c.connMu.Unlock()
	return conn.Close()
}

// refusal reads the line a daemon wrote before it closed the connection
// without reading the request (refuseBusy, a refused peer), when a write
// failed: it says why, where the write's error would only say "broken pipe".
func (c *ControlClient) refusal() (ControlReply, bool) {
	c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	defer c.conn.SetReadDeadline(time.Time{})
	var r ControlReply
	if !c.in.Scan() || json.Unmarshal(c.in.Bytes(), &r) != nil || !r.Failed {
		return ControlReply{}, false
	}
	return r, true
}

// redialIfClosed connects again when the daemon has closed the connection
// between two requests (ControlSocket.IdleTimeout: a chat left alone for a
// while), so the next line is not lost to an idleness the person did not
// see. Nothing was sent on the old connection since its last reply, so
// nothing is sent twice. The caller holds c.mu.
func (c *ControlClient) redialIfClosed() error {
	if !peerClosed(c.conn) {
		return nil
	}
	n, err := DialControl(c.path, c.user)
	if err != nil {
		return fmt.Errorf("daemon connection: it was closed, and dialing again: %w", err)
	}
	c.connMu.Lock()
	defer c.connMu.Unlock()
	if c.closed {
		n.conn.Close()
		return errors.New("daemon connection: closed")
	}
	old := c.conn
	c.conn, c.in = n.conn, n.in
	old.Close()
	return nil
}

// peerClosed reports whether the other end has closed conn: a read would
// give EOF now. It peeks, so a line waiting to be read (a refusal) stays.
func peerClosed(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	raw.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = (n == 0 && err == nil) || errors.Is(err, syscall.ECONNRESET)
	})
	return closed
}

// Op asks the daemon for one of its ControlSocket.Ops and returns the result's JSON.
func (c *ControlClient) Op(op string, arg any) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var raw json.RawMessage
	if arg != nil {
		var err error
		if raw, err = json.Marshal(arg); err != nil {
			return nil, err
		}
	}
	if err := c.redialIfClosed(); err != nil {
		return nil, err
	}
	req, _ := json.Marshal(controlRequest{Op: op, Arg: raw, User: c.user})
	if _, err := c.conn.Write(append(req, '\n')); err != nil {
		if r, ok := c.refusal(); ok {
			return nil, errors.New("daemon: " + strings.TrimPrefix(r.Text, "error: "))
		}
		return nil, fmt.Errorf("daemon connection: %w", err)
	}
	if !c.in.Scan() {
		return nil, fmt.Errorf("daemon connection: %v", or(fmt.Sprint(c.in.Err()), "closed"))
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(c.in.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("daemon reply: %w", err)
	}
	if r.Error != "" {
		return nil, errors.New("daemon: " + r.Error)
	}
	return r.Result, nil
}
