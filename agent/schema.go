package agent

// How tools are shown to a model: the JSON Schema of a spec's parameters, in the
// OpenAI function shape that llm.ToolDef carries and Qwen's template prints.

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/clawedge/clawedge/tools"
)

// toolSchema writes {"type": "object", "properties": {...}, "required": [...]} with the
// keys in a fixed order (what the model reads first is what matters most). compact is
// the local model's form, measured against its 1,500-token budget: an optional
// parameter keeps only its type and enum (its default applies when the model leaves
// it out), a required one keeps a short description unless its enum says it all, and
// lengths are left to validation.
func toolSchema(s tools.Spec, compact bool) json.RawMessage {
	var b bytes.Buffer
	b.WriteString(`{"type":"object","properties":{`)
	var req []string
	for i, p := range s.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONString(&b, p.Name)
		b.WriteByte(':')
		writeParamSchema(&b, p, compact)
		if p.Required {
			req = append(req, p.Name)
		}
	}
	b.WriteString("}")
	if len(req) > 0 {
		b.WriteString(`,"required":[`)
		for i, r := range req {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, r)
		}
		b.WriteString("]")
	}
	b.WriteString("}")
	return b.Bytes()
}

func writeParamSchema(b *bytes.Buffer, p tools.Param, compact bool) {
	b.WriteString(`{"type":`)
	writeJSONString(b, string(p.Type))
	brief := compact && !p.Required && p.Name != "" // array items have no name: described by their array
	if doc := p.Doc; doc != "" && !brief && !(compact && len(p.Enum) > 0 && strings.HasPrefix(doc, "the ")) {
		if compact {
			doc = shorten(doc, 50)
		}
		b.WriteString(`,"description":`)
		writeJSONString(b, doc)
	}
	if len(p.Enum) > 0 {
		b.WriteString(`,"enum":[`)
		for i, e := range p.Enum {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, e)
		}
		b.WriteString("]")
	}
	if p.Min != nil && !brief {
		b.WriteString(`,"minimum":` + tools.FormatNumber(*p.Min))
	}
	if p.Max != nil && !brief {
		b.WriteString(`,"maximum":` + tools.FormatNumber(*p.Max))
	}
	if p.MaxLen > 0 && !compact {
		b.WriteString(`,"maxLength":` + strconv.Itoa(p.MaxLen))
	}
	if p.Default != nil && !compact {
		if d, err := json.Marshal(p.Default); err == nil {
			b.WriteString(`,"default":`)
			b.Write(d)
		}
	}
	if p.Type == tools.KindArray && p.Items != nil {
		b.WriteString(`,"items":`)
		writeParamSchema(b, *p.Items, compact)
		if p.MinItems > 0 {
			b.WriteString(`,"minItems":` + strconv.Itoa(p.MinItems))
		}
		if p.MaxItems > 0 {
			b.WriteString(`,"maxItems":` + strconv.Itoa(p.MaxItems))
		}
	}
	b.WriteString("}")
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc, _ := json.Marshal(s)
	// json.Marshal escapes <, > and & for HTML; models read them better plain.
	enc = bytes.ReplaceAll(enc, []byte(`\u003c`), []byte("<"))
	enc = bytes.ReplaceAll(enc, []byte(`\u003e`), []byte(">"))
	enc = bytes.ReplaceAll(enc, []byte(`\u0026`), []byte("&"))
	b.Write(enc)
}
