// Package telegramtest is an in-process fake of the Telegram Bot API for tests: an
// HTTP server on 127.0.0.1 that speaks the real JSON wire format, serves scripted
// updates through getUpdates with real offset semantics (an update is confirmed, and
// never served again, once getUpdates is called with a greater offset), records every
// call with its parameters, checks what the bot sends the way Telegram does (length,
// MarkdownV2 entities), and injects faults: HTTP errors with retry_after, delays,
// malformed bodies.
package telegramtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
)

// Token is a well-formed bot token for tests.
const Token = "123456789:AAF-test_token_0123456789abcdefghijkl"

// Bot is the bot the server answers getMe with.
var Bot = User{ID: 123456789, IsBot: true, FirstName: "clawedge", Username: "clawedge_bot"}

// User, Chat and the helpers below build updates; they marshal to the Bot API's shape.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

type Chat struct {
	ID    int64  `json:"id"`
	Type  string `json:"type"`
	Title string `json:"title,omitempty"`
}

// Call is one request the server received.
type Call struct {
	Method string
	Params map[string]any // the JSON body decoded
	Raw    []byte
	At     time.Time
	Status int // the HTTP status answered
}

// Int returns a numeric parameter (JSON numbers decode as float64).
func (c Call) Int(key string) int64 {
	v, _ := c.Params[key].(float64)
	return int64(v)
}

// Str returns a string parameter.
func (c Call) Str(key string) string {
	s, _ := c.Params[key].(string)
	return s
}

// Fault is what the next call of a method gets instead of its normal answer.
type Fault struct {
	Status      int           // HTTP status and error_code; 0 with Body or Delay only
	Description string        // default: the status text
	RetryAfter  int           // parameters.retry_after, seconds
	Body        string        // sent as is (malformed JSON, an HTML error page)
	Delay       time.Duration // wait before answering (a slow server)
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	*httptest.Server
	Token string
	// Strict makes sendMessage refuse text Telegram would refuse (too long, bad
	// MarkdownV2). On by default.
	Strict bool
	// OnCall, if set, is called for every call after it is recorded.
	OnCall func(Call)
	// KeepCalls false stops recording (counts still work): for soak tests.
	KeepCalls bool

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced whenever updates or calls change
	nextID   int64
	updates  []pending // not yet confirmed, in id order
	served   map[int64]time.Time
	calls    []Call
	counts   map[string]int
	faults   map[string][]Fault
	msgIDs   map[int64]int64 // per chat
	confirm  int64           // every id below this is confirmed
	closed   bool
	maxBatch int
}

type pending struct {
	id  int64
	raw json.RawMessage
}

// New starts a server on 127.0.0.1; it is closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{Token: Token, Strict: true, KeepCalls: true, changed: make(chan struct{}), nextID: 1000,
		served: map[int64]time.Time{}, counts: map[string]int{}, faults: map[string][]Fault{},
		msgIDs: map[int64]int64{}, maxBatch: 100}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Server = &httptest.Server{Listener: ln, Config: &http.Server{Handler: s}}
	s.Server.Start()
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// Close stops the server, waking every long poll.
func (s *Server) Close() {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.notifyLocked()
	}
	s.mu.Unlock()
	s.Server.CloseClientConnections()
	s.Server.Close()
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Push adds an update; v is marshalled to a JSON object and given the next update_id,
// which is returned.
func (s *Server) Push(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(fmt.Sprintf("telegramtest: Push wants an object: %v", err))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	id := s.nextID
	m["update_id"] = json.RawMessage(fmt.Sprint(id))
	raw, _ := json.Marshal(m)
	s.updates = append(s.updates, pending{id: id, raw: raw})
	s.notifyLocked()
	return id
}

// PushRaw adds an update given as raw JSON (malformed on purpose, or huge) with the next
// id for ordering; the raw text is served as is, so it need not carry that id.
func (s *Server) PushRaw(raw string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	s.updates = append(s.updates, pending{id: s.nextID, raw: json.RawMessage(raw)})
	s.notifyLocked()
	return s.nextID
}

// Text pushes a text message from user in chat (a private chat with the user when chat
// is nil) and returns its update_id.
func (s *Server) Text(from User, chat *Chat, text string) int64 {
	return s.Push(map[string]any{"message": s.message(from, chat, text)})
}

// Edited pushes an edited_message update.
func (s *Server) Edited(from User, text string) int64 {
	return s.Push(map[string]any{"edited_message": s.message(from, nil, text)})
}

// Sticker pushes a message with a sticker and no text.
func (s *Server) Sticker(from User) int64 {
	m := s.message(from, nil, "")
	delete(m, "text")
	m["sticker"] = map[string]any{"file_id": "CAAC", "file_unique_id": "x", "type": "regular", "width": 512, "height": 512, "is_animated": false, "is_video": false, "emoji": "👍"}
	return s.Push(map[string]any{"message": m})
}

// Press pushes a callback_query: from pressed the button with data under message
// (chat, message_id).
func (s *Server) Press(from User, chatID, messageID int64, data string) int64 {
	return s.Push(map[string]any{"callback_query": map[string]any{
		"id": fmt.Sprintf("cq%d", time.Now().UnixNano()), "from": from, "chat_instance": "1", "data": data,
		"message": map[string]any{"message_id": messageID, "date": time.Now().Unix(), "chat": Chat{ID: chatID, Type: "private"}, "text": "approval"},
	}})
}

// Message builds a message object for Push, for updates the helpers do not cover.
func (s *Server) Message(from User, chat *Chat, text string) map[string]any {
	return s.message(from, chat, text)
}

func (s *Server) message(from User, chat *Chat, text string) map[string]any {
	c := Chat{ID: from.ID, Type: "private"}
	if chat != nil {
		c = *chat
	}
	s.mu.Lock()
	s.msgIDs[c.ID]++
	id := s.msgIDs[c.ID]
	s.mu.Unlock()
	m := map[string]any{"message_id": id, "from": from, "chat": c, "date": time.Now().Unix(), "text": text}
	if strings.HasPrefix(text, "/") {
		end := strings.IndexByte(text, ' ')
		if end < 0 {
			end = len(text)
		}
		m["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": len(utf16.Encode([]rune(text[:end])))}}
	}
	return m
}

// Mention adds a mention entity of the bot to a message built with Message, at the
// first "@username" in its text.
func Mention(m map[string]any) map[string]any {
	text, _ := m["text"].(string)
	i := strings.Index(text, "@"+Bot.Username)
	if i < 0 {
		panic("telegramtest: no mention of the bot in " + text)
	}
	off := len(utf16.Encode([]rune(text[:i])))
	ents, _ := m["entities"].([]map[string]any)
	m["entities"] = append(ents, map[string]any{"type": "mention", "offset": off, "length": len(Bot.Username) + 1})
	return m
}

// Fail queues a fault for the next call of method ("*" for any method).
func (s *Server) Fail(method string, f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[method] = append(s.faults[method], f...)
}

// Calls returns the recorded calls of method ("" for all), oldest first.
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Count is how many calls of method ("" for all) were answered.
func (s *Server) Count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if method == "" {
		n := 0
		for _, c := range s.counts {
			n += c
		}
		return n
	}
	return s.counts[method]
}

// Sent returns the texts of successful sendMessage calls to chat, oldest first.
func (s *Server) Sent(chat int64) []string {
	var out []string
	for _, c := range s.Calls("sendMessage") {
		if c.Int("chat_id") == chat && c.Status == 200 {
			out = append(out, c.Str("text"))
		}
	}
	return out
}

// ServedAt is when update id was first returned by getUpdates (zero if never).
func (s *Server) ServedAt(id int64) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served[id]
}

// Confirmed reports whether every update below id has been confirmed.
func (s *Server) Confirmed(id int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirm > id
}

// Pending is how many updates are not confirmed yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// Wait blocks until cond (called with the server locked out of the way, so it may call
// the server's methods) holds, or fails the test after timeout.
func (s *Server) Wait(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		select {
		case <-ch:
		case <-time.After(min(left, 50*time.Millisecond)):
		}
	}
}

// ServeHTTP answers /bot<token>/<method>.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	raw, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	call := Call{Method: method, Raw: raw, At: time.Now()}
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &call.Params)
	}
	status, body := s.answer(r.Context(), ok && ok2, token, method, call)
	call.Status = status
	s.mu.Lock()
	s.counts[method]++
	if s.KeepCalls {
		s.calls = append(s.calls, call)
	}
	hook := s.OnCall
	s.notifyLocked()
	s.mu.Unlock()
	if hook != nil {
		hook(call)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func apiErr(status int, desc string, retryAfter int) (int, []byte) {
	m := map[string]any{"ok": false, "error_code": status, "description": desc}
	if retryAfter > 0 {
		m["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	b, _ := json.Marshal(m)
	return status, b
}

func okResult(v any) (int, []byte) {
	b, _ := json.Marshal(map[string]any{"ok": true, "result": v})
	return 200, b
}

func (s *Server) answer(ctx context.Context, pathOK bool, token, method string, call Call) (int, []byte) {
	if !pathOK {
		return apiErr(404, "Not Found", 0)
	}
	if token != s.Token {
		return apiErr(401, "Unauthorized", 0)
	}
	s.mu.Lock()
	var f *Fault
	for _, key := range []string{method, "*"} {
		if q := s.faults[key]; len(q) > 0 {
			f = &q[0]
			s.faults[key] = q[1:]
			break
		}
	}
	s.mu.Unlock()
	if f != nil {
		if f.Delay > 0 {
			select {
			case <-time.After(f.Delay):
			case <-ctx.Done():
				return 499, nil
			}
		}
		switch {
		case f.Body != "":
			st := f.Status
			if st == 0 {
				st = 200
			}
			return st, []byte(f.Body)
		case f.Status != 0:
			desc := f.Description
			if desc == "" {
				desc = http.StatusText(f.Status)
				if f.Status == 429 {
					desc = fmt.Sprintf("Too Many Requests: retry after %d", f.RetryAfter)
				}
			}
			return apiErr(f.Status, desc, f.RetryAfter)
		}
	}
	if call.Params == nil && len(call.Raw) > 0 {
		return apiErr(400, "Bad Request: invalid JSON", 0)
	}
	switch method {
	case "getMe":
		return okResult(Bot)
	case "getUpdates":
		return s.getUpdates(ctx, call)
	case "sendMessage":
		return s.sendMessage(call)
	case "editMessageText":
		if call.Int("message_id") == 0 || call.Str("text") == "" {
			return apiErr(400, "Bad Request: message text is empty", 0)
		}
		if err := s.checkText(call); err != "" {
			return apiErr(400, err, 0)
		}
		return okResult(map[string]any{"message_id": call.Int("message_id"), "chat": Chat{ID: call.Int("chat_id"), Type: "private"}, "date": time.Now().Unix(), "text": call.Str("text")})
	case "answerCallbackQuery":
		if call.Str("callback_query_id") == "" {
			return apiErr(400, "Bad Request: query is too old and response timeout expired or query ID is invalid", 0)
		}
		return okResult(true)
	case "sendChatAction":
		if call.Str("action") == "" {
			return apiErr(400, "Bad Request: wrong parameter action in request", 0)
		}
		return okResult(true)
	}
	return apiErr(404, "Not Found: method not found", 0)
}

func (s *Server) getUpdates(ctx context.Context, call Call) (int, []byte) {
	offset := call.Int("offset")
	limit := int(call.Int("limit"))
	if limit <= 0 || limit > s.maxBatch {
		limit = s.maxBatch
	}
	timeout := time.Duration(call.Int("timeout")) * time.Second
	deadline := time.Now().Add(timeout)
	for {
		s.mu.Lock()
		if offset > 0 {
			// Confirm everything below offset, as Telegram does.
			keep := s.updates[:0]
			for _, u := range s.updates {
				if u.id >= offset {
					keep = append(keep, u)
				}
			}
			s.updates = keep
			s.confirm = max(s.confirm, offset)
		}
		var out []json.RawMessage
		now := time.Now()
		for _, u := range s.updates {
			if len(out) == limit {
				break
			}
			out = append(out, u.raw)
			if _, ok := s.served[u.id]; !ok {
				s.served[u.id] = now
			}
		}
		ch, closed := s.changed, s.closed
		s.mu.Unlock()
		if len(out) > 0 || closed || time.Now().After(deadline) {
			if out == nil {
				out = []json.RawMessage{}
			}
			return okResult(out)
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		case <-ctx.Done():
			return 499, nil
		}
	}
}

func (s *Server) sendMessage(call Call) (int, []byte) {
	chat := call.Int("chat_id")
	if chat == 0 {
		return apiErr(400, "Bad Request: chat not found", 0)
	}
	if err := s.checkText(call); err != "" {
		return apiErr(400, err, 0)
	}
	s.mu.Lock()
	s.msgIDs[chat]++
	id := s.msgIDs[chat]
	s.mu.Unlock()
	return okResult(map[string]any{"message_id": id, "from": Bot, "chat": Chat{ID: chat, Type: "private"}, "date": time.Now().Unix(), "text": call.Str("text")})
}

// checkText refuses what Telegram refuses: empty text, text over 4096 UTF-16 units after
// entity parsing, and MarkdownV2 that does not parse.
func (s *Server) checkText(call Call) string {
	text := call.Str("text")
	if strings.TrimSpace(text) == "" {
		return "Bad Request: message text is empty"
	}
	if !s.Strict {
		return ""
	}
	plain := text
	switch call.Str("parse_mode") {
	case "":
	case "MarkdownV2":
		var err error
		if plain, err = ParseMarkdownV2(text); err != nil {
			return "Bad Request: can't parse entities: " + err.Error()
		}
	default:
		return "Bad Request: unsupported parse_mode " + call.Str("parse_mode")
	}
	if len(utf16.Encode([]rune(plain))) > 4096 {
		return "Bad Request: message is too long"
	}
	return ""
}
