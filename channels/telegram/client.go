package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// Client is a small Bot API client over net/http: one JSON POST per method to
// APIURL/bot<token>/<method>. The token is in every URL, so no error this client
// returns contains it: net/http's *url.Error prints the URL, and is never returned as is.
type Client struct {
	base  string // api_url without a trailing slash
	token string
	http  *http.Client
	// Timeout bounds one call other than getUpdates (which gets its poll timeout on top).
	Timeout time.Duration
}

// MaxResponseBytes bounds a response body: 100 updates of 4096-character messages with
// entities fit many times over; a runaway server cannot make us allocate without end.
const MaxResponseBytes = 32 << 20

// tokenRE is what a bot token looks like: the bot's numeric id, a colon, and a secret
// of at least 30 URL-safe characters (35 in every token seen so far).
var tokenRE = regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{30,100}$`)

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
	if !tokenRE.MatchString(token) {
		return fmt.Errorf("telegram.token does not look like a bot token (digits, a colon, then 30 or more letters, digits, _ or -; it has %d characters)", len(token))
	}
	return nil
}

// NewClient makes a client for the Bot API at apiURL ("https://api.telegram.org").
// hc nil means a client of its own with keep-alive connections.
func NewClient(apiURL, token string, hc *http.Client) *Client {
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 4
		hc = &http.Client{Transport: tr}
	}
	return &Client{base: strings.TrimRight(apiURL, "/"), token: token, http: hc, Timeout: 30 * time.Second}
}

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
	return e.Code == http.StatusUnauthorized ||
		(e.Code == http.StatusNotFound && (e.Method == "getMe" || e.Method == "getUpdates"))
}

// Temporary reports whether retrying later can succeed: rate limits, server errors.
func (e *APIError) Temporary() bool {
	return e.Code == http.StatusTooManyRequests || e.Code >= 500
}

// NetError is a failure to get a well-formed reply: no connection, a timeout, a
// proxy's HTML page, a cut or malformed body. It is always worth retrying.
type NetError struct {
	Method string
	Msg    string // already free of the token
}

func (e *NetError) Error() string { return "telegram " + e.Method + ": " + e.Msg }

// scrub removes the token, as typed and URL-escaped, from s.
func (c *Client) scrub(s string) string {
	if len(c.token) < 4 {
		return s
	}
	for _, t := range []string{c.token, url.PathEscape(c.token), url.QueryEscape(c.token)} {
		s = strings.ReplaceAll(s, t, "[redacted]")
	}
	return s
}

// Call POSTs req as JSON to method and decodes the result into result (nil: ignore it).
// Errors are *APIError, *NetError (a call timeout included), or ctx's error when the
// caller's ctx ended.
func (c *Client) Call(ctx context.Context, method string, req, result any) error {
	return c.call(ctx, method, req, result, c.Timeout)
}

func (c *Client) call(ctx context.Context, method string, req, result any, timeout time.Duration) error {
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
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/bot"+c.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		// url.Parse errors quote the URL: never return err itself.
		return &NetError{Method: method, Msg: "bad api_url: " + c.scrub(err.Error())}
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(hreq)
	if err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the URL, keep what went wrong
		}
		return &NetError{Method: method, Msg: c.scrub(err.Error())}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		if parent.Err() != nil {
			return parent.Err()
		}
		return &NetError{Method: method, Msg: "reading the reply: " + c.scrub(err.Error())}
	}
	if len(raw) > MaxResponseBytes {
		return &NetError{Method: method, Msg: fmt.Sprintf("reply larger than %d bytes", MaxResponseBytes)}
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return &NetError{Method: method, Msg: fmt.Sprintf("HTTP %d with a reply that is not Bot API JSON (%v)", resp.StatusCode, err)}
	}
	if !r.OK {
		e := &APIError{Method: method, Code: r.ErrorCode, Description: c.scrub(oneLine(r.Description, 300))}
		if e.Code == 0 {
			e.Code = resp.StatusCode
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

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
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
