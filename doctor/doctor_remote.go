package doctor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/remote"
)

// RemoteTimeout bounds each remote model's tiny request in doctor.
const RemoteTimeout = 20 * time.Second

// Remote asks each models.remote entry for a one-token reply with its
// key: the one way to know that the URL, the model name and the key all
// work. The key is never printed (remote errors never hold it).
func Remote(models []config.RemoteModel, timeout time.Duration) []Check {
	var out []Check
	for _, r := range models {
		out = append(out, RemoteModel(r, timeout))
	}
	return out
}

func RemoteModel(r config.RemoteModel, timeout time.Duration) Check {
	c := Check{What: "remote model " + r.Name}
	p, err := daemon.RemoteProvider(r)
	if err != nil {
		c.Info, c.Fix = err.Error(), "correct models.remote "+r.Name+" (docs/remote-models.md has a working config for each server)"
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	s, err := p.Chat(ctx, llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Reply with OK."}},
		MaxTokens: 1, NoThink: true,
	})
	if err == nil {
		_, _, err = llm.Collect(s)
	}
	if err == nil {
		c.OK, c.Info = true, fmt.Sprintf("%s %s answered in %v", r.Kind, r.Model, time.Since(start).Round(time.Millisecond))
		return c
	}
	c.Info = err.Error()
	var re *remote.Error
	status := 0
	if errors.As(err, &re) {
		status = re.Status
	}
	switch {
	case status == 401 || status == 403:
		c.Fix = "the server refused the key: set api_key (api_key: ${ENV_VAR}) to a valid key for " + cmp.Or(r.BaseURL, "the API")
	case status == 404:
		c.Fix = "the model name or base_url is wrong (for Ollama, llama-server and vLLM, base_url ends in /v1)"
	case status != 0:
		c.Fix = "the server answered with an error: see its message above and its log"
	case errors.Is(err, context.DeadlineExceeded):
		c.Fix = fmt.Sprintf("no answer within %v: check the network, base_url and that the server is running", timeout)
	default:
		c.Fix = "cannot reach it: check base_url, the network, and that the server is running"
	}
	return c
}
