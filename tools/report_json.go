package tools

import "encoding/json"

// callJSON is one call of a report as `clawedge exec --json` and the control
// socket show it.
type callJSON struct {
	Tool    string         `json:"tool"`
	Command string         `json:"command,omitempty"`
	OK      bool           `json:"ok"`
	Text    string         `json:"text,omitempty"`
	Error   string         `json:"error,omitempty"`
	Fields  map[string]any `json:"fields,omitempty"`
}

// MarshalJSON renders the report as an array of stages, each an array of calls
// with their plain result fields.
func (r *Report) MarshalJSON() ([]byte, error) {
	stages := make([][]callJSON, 0, len(r.Stages))
	for _, st := range r.Stages {
		calls := make([]callJSON, 0, len(st.Calls))
		for _, c := range st.Calls {
			cj := callJSON{Tool: c.Tool, Command: c.Command, OK: c.Err == nil, Text: c.Result.Text}
			if c.Err != nil {
				cj.Error = c.Err.Error()
			}
			if len(c.Result.Fields) > 0 {
				cj.Fields = make(map[string]any, len(c.Result.Fields))
				for k, v := range c.Result.Fields {
					cj.Fields[k] = v.Plain()
				}
			}
			calls = append(calls, cj)
		}
		stages = append(stages, calls)
	}
	return json.Marshal(stages)
}
