#!/usr/bin/env bash
# Installs the independent MCP implementations the MCP tests run against, from
# npm at pinned versions, into third_party/mcp (git-ignored):
#
#   @modelcontextprotocol/sdk                 the TypeScript SDK, as a client of `clawedge mcp`
#   @modelcontextprotocol/server-everything   the reference server, for clawedge's client
#   @modelcontextprotocol/conformance         the official conformance suite (server and client)
#   node-linux-<arch>                         node 22, which the suite needs (Debian's is older)
#
# Re-running is fast: a stamp naming the versions skips the install (npm_pinned).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

sdk=1.32.2
everything=2026.8.31
conformance=0.1.16
node=22.23.3
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) die "no node-linux package for $(uname -m)" ;;
esac
npm_pinned third_party/mcp "@modelcontextprotocol/sdk@$sdk" "@modelcontextprotocol/server-everything@$everything" \
  "@modelcontextprotocol/conformance@$conformance" "node-linux-$arch@$node"
