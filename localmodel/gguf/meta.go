package gguf

import "strings"

// Well-known metadata keys.
const (
	KeyArchitecture  = "general.architecture"
	KeyName          = "general.name"
	KeyFileType      = "general.file_type"
	KeyQuantVersion  = "general.quantization_version"
	KeyChatTemplate  = "tokenizer.chat_template"
	KeyTokens        = "tokenizer.ggml.tokens"
	KeyTokenizer     = "tokenizer.ggml.model"
	KeyPreTokenizer  = "tokenizer.ggml.pre"
	suffixContextLen = ".context_length"
)

// Architecture is general.architecture ("qwen2", "llama", ...), or "".
func (f *File) Architecture() string {
	v, _ := f.Get(KeyArchitecture)
	s, _ := v.AsString()
	return s
}

// Name is general.name, or "".
func (f *File) Name() string {
	v, _ := f.Get(KeyName)
	s, _ := v.AsString()
	return s
}

// ParameterCount is the number of weights: the sum of the tensors' elements.
// A tied output layer reuses the embedding and is counted once, as it is
// stored once.
func (f *File) ParameterCount() uint64 {
	var n uint64
	for _, t := range f.Tensors {
		n += t.Elements()
	}
	return n
}

// FileType is general.file_type, if the file states it.
func (f *File) FileType() (FileType, bool) {
	v, ok := f.Get(KeyFileType)
	if !ok {
		return 0, false
	}
	u, ok := v.AsUint()
	if !ok || u > 1<<32-1 {
		return 0, false
	}
	return FileType(u), true
}

// DominantType is the tensor type holding the most bytes among the matrices
// (tensors of two or more dimensions; norms and biases are F32 whatever the
// quantization). For a file without matrices, among all tensors; F32 if there
// are no tensors.
func (f *File) DominantType() TensorType {
	bytes := map[TensorType]uint64{}
	for pass := 0; pass < 2 && len(bytes) == 0; pass++ {
		for _, t := range f.Tensors {
			if pass == 1 || len(t.Dims) >= 2 {
				bytes[t.Type] += t.Bytes()
			}
		}
	}
	best, most := F32, uint64(0)
	for t, b := range bytes {
		if b > most || b == most && t < best {
			best, most = t, b
		}
	}
	return best
}

// Quantization names how the weights are stored: the file type when the file
// states a known one ("Q4_K_M"), else the dominant tensor type ("Q8_0").
func (f *File) Quantization() string {
	if ft, ok := f.FileType(); ok {
		if _, known := fileTypes[ft]; known {
			return ft.String()
		}
	}
	return f.DominantType().String()
}

// ContextLength is <architecture>.context_length: the context the model was
// trained for.
func (f *File) ContextLength() (uint64, bool) {
	arch := f.Architecture()
	if arch == "" {
		return 0, false
	}
	v, ok := f.Get(arch + suffixContextLen)
	if !ok {
		return 0, false
	}
	return v.AsUint()
}

// ChatTemplate is tokenizer.chat_template (a Jinja template), if present.
func (f *File) ChatTemplate() (string, bool) {
	v, ok := f.Get(KeyChatTemplate)
	if !ok {
		return "", false
	}
	return v.AsString()
}

// TemplateFamily names the prompt format a chat template produces, from the
// markers it contains ("chatml" for Qwen's <|im_start|>), or "" if none is
// recognised.
func TemplateFamily(tmpl string) string {
	switch {
	case strings.Contains(tmpl, "<|im_start|>"):
		return "chatml"
	case strings.Contains(tmpl, "<|start_header_id|>"):
		return "llama3"
	case strings.Contains(tmpl, "<start_of_turn>"):
		return "gemma"
	case strings.Contains(tmpl, "<|user|>") && strings.Contains(tmpl, "<|end|>"):
		return "phi3"
	case strings.Contains(tmpl, "[INST]"):
		return "mistral"
	}
	return ""
}
