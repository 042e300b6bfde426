package router

import (
	"context"

	"github.com/clawedge/clawedge/llm"
)

// TokenCounter is what a provider implements when it can count a request's
// prompt tokens exactly (its own tokenizer and template). The router asks
// it, when present, before deciding whether the prompt fits the provider's
// window (only then: a provider with no known window is not asked); an
// error falls back to EstimateTokens. It is called for every routed call,
// so it should be cheap.
type TokenCounter interface {
	CountTokens(ctx context.Context, req llm.Request) (int, error)
}

// Estimate constants: BPE vocabularies of the Qwen and GPT families make
// about 3.5 to 4 bytes of English per token, fewer for code, JSON and
// other languages; 3.5 errs on the side of counting more tokens, so that a
// prompt that barely fits is sent elsewhere rather than refused. Each
// message adds its role markers (<|im_start|>role\n ... <|im_end|>\n: about
// 4 tokens), each tool definition its wrapping, and the reply its start.
const (
	bytesPerTokenX2 = 7 // 3.5 bytes per token, doubled to stay in integers
	perMessage      = 4
	perTool         = 8
	perReply        = 3
)

// EstimateTokens is a cheap estimate of a request's prompt tokens, for
// providers that cannot count: every byte of message text, tool call and
// tool definition at 3.5 bytes a token, plus 4 tokens per message, 8 per
// tool definition and 3 for the reply's start.
func EstimateTokens(req llm.Request) int {
	bytes := 0
	for _, m := range req.Messages {
		bytes += len(m.Content) + len(m.Name) + len(m.ToolCallID)
		for _, c := range m.ToolCalls {
			bytes += len(c.ID) + len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		bytes += len(t.Name) + len(t.Doc) + len(t.Params)
	}
	return (bytes*2+bytesPerTokenX2-1)/bytesPerTokenX2 + perMessage*len(req.Messages) + perTool*len(req.Tools) + perReply
}
