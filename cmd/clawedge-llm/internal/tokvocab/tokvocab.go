//go:build llamacpp

// Package tokvocab reads a loaded model's vocabulary into a grammar.Vocab,
// for the runner's constrained decoding and the constraint benchmark.
package tokvocab

import (
	"fmt"
	"regexp"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/localmodel/llama"
)

// padToken matches the filler entries converters add to round a vocabulary
// up ("[PAD151646]"): typed user-defined, but never text a model should write.
var padToken = regexp.MustCompile(`^\[PAD[0-9]+\]$`)

// Build reads every token's bytes (special tokens rendered, so Qwen's
// <tool_call> is its text) and kind: end of generation as llama.cpp tells it;
// control, unused, unknown and padding tokens never allowed; the rest,
// byte-level pieces and user-defined added tokens, normal text.
func Build(m *llama.Model) (*grammar.Vocab, error) {
	tt, err := m.Tokens(true)
	if err != nil {
		return nil, fmt.Errorf("constraint: the model's vocabulary: %w", err)
	}
	toks := make([]grammar.Token, len(tt.Attr))
	for i, attr := range tt.Attr {
		piece := tt.Data[tt.Off[i]:tt.Off[i+1]]
		kind := grammar.TokenNormal
		switch {
		case tt.EOG[i]:
			kind = grammar.TokenEOG
		case attr&(llama.AttrControl|llama.AttrUnused|llama.AttrUnknown) != 0 || attr == 0:
			kind = grammar.TokenControl
		case attr&llama.AttrUserDefined != 0 && padToken.Match(piece):
			kind = grammar.TokenControl
		}
		toks[i] = grammar.Token{Bytes: piece, Kind: kind}
	}
	v, err := grammar.NewVocab(toks)
	if err != nil {
		return nil, fmt.Errorf("constraint: the model's vocabulary: %w", err)
	}
	return v, nil
}
