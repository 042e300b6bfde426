package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/remote"
)

// remoteCheckTimeout bounds each remote model's tiny request in doctor.
const remoteCheckTimeout = 20 * time.Second

// remoteChecks asks each models.remote entry for a one-token reply with its
// key: the one way to know that the URL, the model name and the key all
// work. The key is never printed (remote errors never hold it).
func remoteChecks(models []config.RemoteModel, timeout time.Duration) []check {
	var out []check
	for _, r := range models {
		out = append(out, remoteCheck(r, timeout))
	}
	return out
}

func remoteCheck(r config.RemoteModel, timeout time.Duration) check {
	c := check{what: "remote model " + r.Name}
	p, err := remoteProvider(r)
	if err != nil {
		c.info, c.fix = err.Error(), "correct models.remote "+r.Name+" (docs/remote-models.md has a working config for each server)"
		return c
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	_, _, err = llm.Collect(mustStream(p.Chat(ctx, llm.Request{
		Messages:  []llm.Message{{Role: llm.RoleUser, Content: "Reply with OK."}},
		MaxTokens: 1, NoThink: true,
	})))
	if err == nil {
		c.ok, c.info = true, fmt.Sprintf("%s %s answered in %v", r.Kind, r.Model, time.Since(start).Round(time.Millisecond))
		return c
	}
	c.info = err.Error()
	var re *remote.Error
	status := 0
	if errors.As(err, &re) {
		status = re.Status
	}
	switch {
	case status == 401 || status == 403:
		c.fix = "the server refused the key: set api_key (api_key: ${ENV_VAR}) to a valid key for " + or(r.BaseURL, "the API")
	case status == 404:
		c.fix = "the model name or base_url is wrong (for Ollama, llama-server and vLLM, base_url ends in /v1)"
	case status != 0:
		c.fix = "the server answered with an error: see its message above and its log"
	case errors.Is(err, context.DeadlineExceeded):
		c.fix = fmt.Sprintf("no answer within %v: check the network, base_url and that the server is running", timeout)
	default:
		c.fix = "cannot reach it: check base_url, the network, and that the server is running"
	}
	return c
}
