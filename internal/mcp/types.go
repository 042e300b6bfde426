package mcp

import "encoding/json"

// Protocol versions, newest first: the client asks for the first; either
// side accepts any of them (the TypeScript SDK and the reference server
// speak all four).
var Versions = []string{"2025-06-18", "2025-11-25", "2025-03-26", "2024-11-05"}

func supported(v string) bool {
	for _, s := range Versions {
		if s == v {
			return true
		}
	}
	return false
}

// Implementation names a client or a server in the handshake.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

type initializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      Implementation  `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string         `json:"protocolVersion"`
	Capabilities    map[string]any `json:"capabilities"`
	ServerInfo      Implementation `json:"serverInfo"`
	Instructions    string         `json:"instructions,omitempty"`
}

// Tool is a tool as tools/list gives it.
type Tool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

type listParams struct {
	Cursor string `json:"cursor,omitempty"`
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Content is one item of a tool result. Type says which fields are set:
// "text" (Text), "image" and "audio" (Data, base64, and MIMEType),
// "resource_link" (URI, Name), "resource" (Resource). Raw keeps the item as
// it came, for kinds this package does not know.
type Content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"`
	MIMEType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
	Raw      json.RawMessage   `json:"-"`
}

func (c *Content) UnmarshalJSON(b []byte) error {
	type plain Content
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	c.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// CallToolResult is what tools/call returns.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
}

// Resource is a resource as resources/list gives it.
type Resource struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	MIMEType    string `json:"mimeType,omitempty"`
}

type readResourceParams struct {
	URI string `json:"uri"`
}

// ResourceContents is one part of a read resource (or an embedded one).
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// ReadResourceResult is what resources/read returns.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

type cancelledParams struct {
	RequestID json.RawMessage `json:"requestId"`
	Reason    string          `json:"reason,omitempty"`
}

// Method names used here.
const (
	methodInitialize        = "initialize"
	methodInitialized       = "notifications/initialized"
	methodPing              = "ping"
	methodCancelled         = "notifications/cancelled"
	methodToolsList         = "tools/list"
	methodToolsCall         = "tools/call"
	methodToolsChanged      = "notifications/tools/list_changed"
	methodResourcesList     = "resources/list"
	methodResourcesRead     = "resources/read"
	methodResourceTemplates = "resources/templates/list"
)
