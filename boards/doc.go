// Package boards is this board among others (docs/boards.md): each board an
// A2A v1.0 server (the official a2a-go SDK) whose card lists its tools as
// skills; boards paired once by a one-time code, each pinning the other's
// self-signed certificate, every request after that mutual TLS; a paired
// board's tools registered here as BOARD.ns/tool, each call decided here
// (may this principal call that board's tools?) and there (what may
// board:THIS do?), audited on both sides under one call id.
package boards
