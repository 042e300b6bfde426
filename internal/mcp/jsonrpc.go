// Package mcp speaks the subset of the Model Context Protocol clawedge uses,
// as client (mcpclient) and as server (channels/mcpserver): JSON-RPC 2.0
// messages, the initialize handshake, tools, resources, ping, cancellation,
// and the stdio, streamable HTTP and older HTTP+SSE transports. It is ours
// rather than the official Go SDK because that SDK links OAuth, JWT, gob and
// more (≈1.9 MB of a 12 MB budget) that a board never uses.
//
// Every read is bounded (MaxMessage): a server that sends garbage or a huge
// line ends its connection with an error that says so; it never hangs or
// exhausts the daemon.
package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxMessage bounds one JSON-RPC message read from a peer. A tool result of
// 10 MB fits (the caller then cuts it to what it keeps); more ends the
// connection with an error.
const MaxMessage = 16 << 20

// JSON-RPC error codes (JSON-RPC 2.0, section 5.1).
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// Message is one JSON-RPC 2.0 message: a request (ID and Method), a
// notification (Method only) or a response (ID and Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest, IsNotification and IsResponse classify a decoded message.
func (m *Message) IsRequest() bool      { return m.Method != "" && len(m.ID) > 0 }
func (m *Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }
func (m *Message) IsResponse() bool     { return m.Method == "" && len(m.ID) > 0 }

// Error is a JSON-RPC error object; as a Go error it reads "code: message".
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("%s (JSON-RPC error %d)", e.Message, e.Code) }

// Decode parses one message and checks it is JSON-RPC 2.0: a version of
// "2.0", an id that is a number or a string, and exactly one of a method, a
// result or an error. The error says what is wrong, quoting at most 80 bytes.
func Decode(b []byte) (*Message, error) {
	b = bytes.TrimSpace(b)
	var m Message
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC message (%v): %s", err, quote(b))
	}
	if m.JSONRPC != "2.0" {
		return nil, fmt.Errorf("not JSON-RPC 2.0 (jsonrpc %q): %s", m.JSONRPC, quote(b))
	}
	if len(m.ID) > 0 && !validID(m.ID) {
		return nil, fmt.Errorf("JSON-RPC id is neither a number nor a string: %s", quote(b))
	}
	switch {
	case m.Method != "" && (m.Result != nil || m.Error != nil):
		return nil, fmt.Errorf("JSON-RPC message has both a method and a result or error: %s", quote(b))
	case m.Method == "" && len(m.ID) == 0:
		return nil, fmt.Errorf("JSON-RPC message has neither a method nor an id: %s", quote(b))
	case m.Method == "" && (m.Result == nil) == (m.Error == nil):
		return nil, fmt.Errorf("JSON-RPC response needs exactly one of result and error: %s", quote(b))
	}
	return &m, nil
}

func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// idKey is an id as a map key: a number and the same number spelled with an
// exponent are different keys, which is fine since we only match our own ids.
func idKey(id json.RawMessage) string { return string(bytes.TrimSpace(id)) }

func quote(b []byte) string {
	if len(b) > 80 {
		return fmt.Sprintf("%q…", b[:80])
	}
	return fmt.Sprintf("%q", b)
}
