package telegram

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/clawedge/clawedge/internal/httpclient"
	"github.com/clawedge/clawedge/internal/redact"
)

// Client is a small Bot API client: one JSON POST per method to
// APIURL/bot<token>/<method>, over internal/httpclient. The token is in every
// URL, so no error this client returns contains it: httpclient's errors never
// quote a URL, and every message is scrubbed besides.
type Client struct {
	token string
	h     *http.Client
	base  string // api_url without a trailing "/"
	err   error  // a bad api_url, returned by every call
	// Timeout bounds one call other than getUpdates (which gets its poll timeout on top).
	Timeout time.Duration
}

// ClientOptions tunes a Client; the zero value is what the daemon uses.
type ClientOptions struct {
	// Timeout is the Client's initial Timeout; default 30 s.
	Timeout time.Duration
	// RootCAs verifies the server's certificate; nil means the system's roots.
	RootCAs *x509.CertPool
	// Getenv reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY (or their lower-case forms)
	// once; nil means os.Getenv (and the process's shared connections). A bad
	// setting is the error of every call.
	Getenv func(string) string
}

// MaxResponseBytes bounds a response body: 100 updates of 4096-character messages with
// entities fit many times over; a runaway server cannot make us allocate without end.
const MaxResponseBytes = 32 << 20

// tokenRE is what a bot token looks like: the bot's numeric id, a colon, and a secret
// of at least 30 URL-safe characters (35 in every token seen so far).
// The lengths are checked apart: counted repetitions such as {30,100} compile
// to a regexp state per repetition, 41 kB of heap for the daemon's life.
var tokenRE = regexp.MustCompile(`^([0-9]+):([A-Za-z0-9_-]+)$`)

// CheckToken refuses a token that cannot be right whatever Telegram says: empty, or
// holding characters that would break the URL it goes into. It never shows the token.
func CheckToken(token string) error {
	switch {
	case token == "":
		return errors.New("telegram.token is empty")
	case strings.TrimSpace(token) != token:
		return errors.New("telegram.token has leading or trailing white space")
	case strings.ContainsAny(token, "/?#%@ \t\r\n"):
		return errors.New("telegram.token contains characters a bot token never has (/ ? # % @ or white space)")
	}
	return nil
}

// TokenShape says whether token looks like the tokens @BotFather gives out. A mismatch
// is worth a warning, not a refusal: Telegram has never promised the format, and getMe
// is the real check.
func TokenShape(token string) error {
	if m := tokenRE.FindStringSubmatch(token); m == nil || len(m[1]) > 20 || len(m[2]) < 30 || len(m[2]) > 100 {
		return fmt.Errorf("telegram.token does not look like a bot token (digits, a colon, then 30 or more letters, digits, _ or -; it has %d characters)", len(token))
	}
	return nil
}

// NewClient makes a client for the Bot API at apiURL ("https://api.telegram.org"; a
// path in it is kept as a prefix). It makes no network call: a bad apiURL or proxy
// setting is the error of every call.
func NewClient(apiURL, token string, o ClientOptions) *Client {
	c := &Client{token: token, Timeout: 30 * time.Second}
	if o.Timeout > 0 {
		c.Timeout = o.Timeout
	}
	c.h = httpclient.New(httpclient.Options{RootCAs: o.RootCAs, Getenv: o.Getenv})
	c.base, c.err = checkAPIURL(apiURL)
	return c
}

// checkAPIURL refuses what cannot be a Bot API base URL and drops a trailing "/". Its
// errors may quote apiURL (the caller scrubs them: the token may have been expanded
// into it).
func checkAPIURL(apiURL string) (string, error) {
	u, err := url.Parse(apiURL)
	if err != nil {
		return "", errors.New("bad api_url: " + err.Error())
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http":
		return "", errors.New("bad api_url: the scheme must be https:// or http://")
	case u.Hostname() == "":
		return "", errors.New("bad api_url: no host")
	case u.User != nil:
		return "", errors.New("bad api_url: it must not hold a user name or password")
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return "", errors.New("bad api_url: it must not have a query or fragment")
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// CloseIdleConnections closes the connections kept for the next calls.
func (c *Client) CloseIdleConnections() { c.h.CloseIdleConnections() }

// APIError is a reply with "ok": false.
type APIError struct {
	Method      string
	Code        int    // error_code, the HTTP status
	Description string // Telegram's words
	RetryAfter  time.Duration
	MigrateTo   int64 // a group became a supergroup with this id
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// ErrUnauthorized matches (errors.Is) the error of a call whose token Telegram refused.
var ErrUnauthorized = errors.New("the bot token was refused")

// Is makes 401 on any method, and 404 on getMe or getUpdates (Telegram's answer to a
// token of the wrong shape), match ErrUnauthorized: retrying cannot help.
func (e *APIError) Is(target error) bool {
	if target != ErrUnauthorized {
		return false
	}
	return e.Code == 401 || (e.Code == 404 && (e.Method == "getMe" || e.Method == "getUpdates"))
}

// Temporary reports whether retrying later can succeed: rate limits, server errors.
func (e *APIError) Temporary() bool {
	return e.Code == 429 || e.Code >= 500
}

// NetError is a failure to get a well-formed reply: no connection, a timeout, a
// proxy's HTML page, a cut or malformed body. It is always worth retrying.
type NetError struct {
	Method string
	Msg    string // already free of the token
}

func (e *NetError) Error() string { return "telegram " + e.Method + ": " + e.Msg }

// scrub removes the token, as typed and URL-escaped, from s (internal/redact).
// It runs before any cut, so that an echoed token goes whole.
func (c *Client) scrub(s string) string {
	return redact.String(s, c.token, url.PathEscape(c.token), url.QueryEscape(c.token))
}

// Call POSTs req as JSON to method and decodes the result into result (nil: ignore it).
// Errors are *APIError, *NetError (a call timeout included), or ctx's error when the
// caller's ctx ended.
func (c *Client) Call(ctx context.Context, method string, req, result any) error {
	return c.call(ctx, method, req, result, c.Timeout)
}

// retrySafe lists the methods that do no harm if they reach Telegram twice: the
// transport may send them again on a fresh connection when an idle one turned out
// dead (httpclient.Replayable). Anything that sends or changes a message is not
// here: a sendMessage is never repeated by the transport (the channel decides, see
// Channel.sendOne).
func retrySafe(method string) bool { return method == "getMe" || method == "getUpdates" }

func (c *Client) call(ctx context.Context, method string, req, result any, timeout time.Duration) error {
	if c.err != nil {
		return &NetError{Method: method, Msg: c.scrub(c.err.Error())}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("telegram %s: encode request: %w", method, err)
	}
	parent := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	// PathEscape leaves a well-formed token as it is; CheckToken refuses the others.
	hreq, err := http.NewRequestWithContext(ctx, "POST", c.base+"/bot"+url.PathEscape(c.token)+"/"+method, bytes.NewReader(body))
	if err != nil {
		return &NetError{Method: method, Msg: "bad api_url"}
	}
	hreq.Header.Set("User-Agent", "clawedge")
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("Content-Type", "application/json")
	if retrySafe(method) {
		httpclient.Replayable(hreq)
	}
	status, raw, err := c.post(hreq)
	if err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		msg := err.Error()
		// The connection's deadline is ctx's: it may fire a moment before ctx says so.
		if dl, ok := ctx.Deadline(); ok && timeout > 0 && !time.Now().Before(dl) {
			msg += fmt.Sprintf(" (no reply within %s)", timeout)
		}
		return &NetError{Method: method, Msg: c.scrub(msg)}
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return &NetError{Method: method, Msg: fmt.Sprintf("HTTP %d with a reply that is not Bot API JSON (%v)", status, err)}
	}
	if !r.OK {
		e := &APIError{Method: method, Code: r.ErrorCode, Description: c.scrub(oneLine(c.scrub(r.Description), 300))}
		if e.Code == 0 {
			e.Code = status
		}
		if p := r.Parameters; p != nil {
			e.RetryAfter = time.Duration(p.RetryAfter) * time.Second
			e.MigrateTo = p.MigrateToChatID
		}
		return e
	}
	if result != nil {
		if err := json.Unmarshal(r.Result, result); err != nil {
			return &NetError{Method: method, Msg: fmt.Sprintf("malformed result: %v", err)}
		}
	}
	return nil
}

// post sends req and reads the whole reply, of at most MaxResponseBytes.
func (c *Client) post(req *http.Request) (status int, body []byte, err error) {
	resp, err := httpclient.Do(c.h, req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > MaxResponseBytes {
		return 0, nil, fmt.Errorf("reply too large: Content-Length %d is over the %d-byte cap", resp.ContentLength, MaxResponseBytes)
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the reply: %w", err)
	}
	if len(body) > MaxResponseBytes {
		return 0, nil, fmt.Errorf("reply too large: over the %d-byte cap", MaxResponseBytes)
	}
	return resp.StatusCode, body, nil
}

// oneLine joins s's lines and cuts it to max bytes; s must be scrubbed already.
func oneLine(s string, max int) string {
	return redact.Clip(strings.Join(strings.Fields(s), " "), max)
}

// GetMe returns the bot itself; it is how a token is checked.
func (c *Client) GetMe(ctx context.Context) (User, error) {
	var u User
	err := c.Call(ctx, "getMe", struct{}{}, &u)
	return u, err
}

// GetUpdates long-polls for up to poll. The raw updates are returned so that one that
// does not decode can be skipped alone (its id is still needed to move past it).
func (c *Client) GetUpdates(ctx context.Context, offset int64, limit int, poll time.Duration) ([]json.RawMessage, error) {
	var raw []json.RawMessage
	req := GetUpdates{Offset: offset, Limit: limit, Timeout: int(poll / time.Second),
		AllowedUpdates: []string{"message", "edited_message", "callback_query"}}
	err := c.call(ctx, "getUpdates", req, &raw, c.Timeout+poll)
	return raw, err
}

// SendMessage sends a message and returns it.
func (c *Client) SendMessage(ctx context.Context, m SendMessage) (Message, error) {
	var out Message
	err := c.Call(ctx, "sendMessage", m, &out)
	return out, err
}

// EditMessageText replaces a message's text (and its keyboard: nil removes it).
func (c *Client) EditMessageText(ctx context.Context, m EditMessageText) error {
	return c.Call(ctx, "editMessageText", m, nil)
}

// AnswerCallbackQuery stops the button's spinner, optionally with a notice.
func (c *Client) AnswerCallbackQuery(ctx context.Context, a AnswerCallbackQuery) error {
	return c.Call(ctx, "answerCallbackQuery", a, nil)
}

// SendChatAction shows "typing…" in the chat for about five seconds.
func (c *Client) SendChatAction(ctx context.Context, chatID int64, action string) error {
	return c.Call(ctx, "sendChatAction", map[string]any{"chat_id": chatID, "action": action}, nil)
}
