#!/usr/bin/env bash
# Installs the independent MCP implementations the MCP tests run against, from
# npm at pinned versions, into third_party/mcp (git-ignored):
#
#   @modelcontextprotocol/sdk                 the TypeScript SDK, as a client of `clawedge mcp`
#   @modelcontextprotocol/server-everything   the reference server, for clawedge's client
#   @modelcontextprotocol/conformance         the official conformance suite (server and client)
#   node-linux-<arch>                         node 22, which the suite needs (Debian's is older)
#
# Re-running is fast: a stamp naming the versions skips the install.
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
dest=third_party/mcp
stamp=$dest/.installed-$sdk-$everything-$conformance-$node

if [ -f "$stamp" ]; then
  exit 0
fi
command -v npm >/dev/null || need_apt npm
mkdir -p "$dest"
step "npm install @modelcontextprotocol/sdk@$sdk @modelcontextprotocol/server-everything@$everything @modelcontextprotocol/conformance@$conformance node-linux-$arch@$node"
# --ignore-scripts: nothing from the registry runs at install time.
(cd "$dest" && [ -f package.json ] || echo '{"private": true}' >package.json)
npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dest" \
  "@modelcontextprotocol/sdk@$sdk" "@modelcontextprotocol/server-everything@$everything" \
  "@modelcontextprotocol/conformance@$conformance" "node-linux-$arch@$node" >/dev/null
touch "$stamp"
