package remote

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/clawedge/clawedge/llm"
)

// Options is what every remote provider is configured with: llm/openai's and
// llm/anthropic's Options embed it and add what only their API has. Only
// Model is required (and APIKey where the Kind says so).
type Options struct {
	// Name is the provider's name in routes, logs and errors; "": the kind.
	Name string
	// BaseURL is the API's root; "": the kind's.
	BaseURL string
	Model   string
	// APIKey is sent as the API wants it. It never appears in an error.
	APIKey string
	// Context is the model's context window in tokens (Caps); 0: the kind's.
	Context int
	// Timeout bounds connecting and waiting for the reply to start; 0: 60s.
	// A LAN server loading a model may need more.
	Timeout time.Duration
	// IdleTimeout fails a reply stream that receives nothing for this long;
	// 0: 60s.
	IdleTimeout time.Duration
	// MaxRetries is how many times a request that failed before its reply
	// started (network, timeout, 429, 5xx) is sent again; 0: 2, negative:
	// none.
	MaxRetries int
	// RetryBase is the first delay between attempts (doubling, with jitter,
	// up to 10s); a server's Retry-After replaces it. 0: 500ms.
	RetryBase time.Duration
	// BreakerThreshold failed requests in a row open the circuit breaker:
	// requests then fail at once (llm.ErrUnavailable) for BreakerCooldown,
	// after which one probe goes through. 0: 5 and 30s; negative threshold:
	// no breaker.
	BreakerThreshold int
	BreakerCooldown  time.Duration
	// Sampling is sent with a request that has none of its own (the config's
	// temperature and seed); nil: the server's defaults.
	Sampling *llm.Sampling
	// Client sends the requests; nil: internal/httpclient's, sharing the
	// process's connections.
	Client *http.Client
}

// Kind is what a provider's API brings to its Options: the defaults, whether
// a key is required, and how its errors read (Config.APIError, Config.Setup).
type Kind struct {
	Name     string // "openai": the default Name, and the errors' prefix
	BaseURL  string
	Context  int
	NeedKey  bool
	APIError func(status int, body []byte) (msg string, capacity bool)
	Setup    func(status int, msg string) (fix string)
}

// Caller fills o's defaults from k, refuses what cannot work, and returns
// the Caller that sends o's requests. It does not contact the server.
func (o *Options) Caller(k Kind) (*Caller, error) {
	if o.Name == "" {
		o.Name = k.Name
	}
	switch {
	case o.Model == "":
		return nil, fmt.Errorf("%s %q: no model", k.Name, o.Name)
	case k.NeedKey && o.APIKey == "":
		return nil, fmt.Errorf("%s %q: no API key", k.Name, o.Name)
	case strings.ContainsFunc(o.APIKey, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return nil, fmt.Errorf("%s %q: the API key holds a control character (a stray newline?)", k.Name, o.Name)
	}
	if o.BaseURL == "" {
		o.BaseURL = k.BaseURL
	}
	if !strings.HasPrefix(o.BaseURL, "http://") && !strings.HasPrefix(o.BaseURL, "https://") {
		return nil, fmt.Errorf("%s %q: base URL %q: want http:// or https://", k.Name, o.Name, o.BaseURL)
	}
	o.BaseURL = strings.TrimRight(o.BaseURL, "/")
	if o.Context <= 0 {
		o.Context = k.Context
	}
	var breaker *Breaker
	if o.BreakerThreshold >= 0 {
		breaker = &Breaker{Threshold: o.BreakerThreshold, Cooldown: o.BreakerCooldown}
	}
	return New(Config{
		Kind: k.Name, Name: o.Name,
		Timeout: o.Timeout, IdleTimeout: o.IdleTimeout,
		MaxRetries: o.MaxRetries, RetryBase: o.RetryBase,
		Breaker: breaker, Secrets: []string{o.APIKey}, Client: o.Client,
		APIError: k.APIError, Setup: k.Setup,
	}), nil
}
