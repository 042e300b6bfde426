package router_test

import (
	"context"
	"fmt"
	"time"

	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/router"
	"github.com/clawedge/clawedge/llm/router/routertest"
)

// The router over a local model and two remote ones, as config's models
// section declares them: models.local's quality and speed, each remote
// model's context, cost_in, cost_out, quality, speed and tools (NoTools is
// !tools), and models.router's strategy, order and local_queue_budget.
func Example() {
	local := routertest.Local("local", 4096) // a *localmodel.Client in clawedge
	lan := routertest.Remote("lan", 32768)   // an llm/openai provider
	claude := routertest.Remote("claude", 200000,
		routertest.Reply("The relay is off.", 9000, 6))

	r, err := router.New([]router.Entry{
		{Provider: local, Model: "qwen2.5-0.5b-instruct", Quality: 3, Speed: 4},
		{Provider: lan, Model: "qwen2.5:7b", Quality: 6, Speed: 7, NoTools: true},
		{Provider: claude, Model: "claude-sonnet-4-5", Quality: 9, Speed: 6, CostIn: 0.003, CostOut: 0.015},
	}, router.Options{
		Strategy:         router.LocalFirst,
		Order:            []string{"claude", "lan"},
		LocalQueueBudget: 10 * time.Second,
	})
	if err != nil {
		panic(err)
	}

	// A long conversation with tools: too long for the local window, and
	// lan does not take tools.
	req := llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: string(make([]byte, 30000))}},
		Tools:    []llm.ToolDef{{Name: "gpio.read"}},
	}
	s, err := r.Chat(context.Background(), req)
	if err != nil {
		panic(err)
	}
	text, final, err := llm.Collect(s)
	if err != nil {
		panic(err)
	}
	fmt.Println(text)
	fmt.Println(final.Provider, final.Model)
	fmt.Println(final.Route)
	fmt.Printf("cost %.3f\n", final.Cost)
	// Output:
	// The relay is off.
	// claude claude-sonnet-4-5
	// local-first: remote claude after local: capacity exceeded (prompt 8,589 tokens > window 4,096)
	// cost 0.027
}
