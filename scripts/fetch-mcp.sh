#!/usr/bin/env bash
# Installs the independent MCP implementations the MCP tests run against, from
# npm at pinned versions, into third_party/mcp (git-ignored):
#
#   @modelcontextprotocol/sdk                 the TypeScript SDK, as a client of `clawedge mcp`
#   @modelcontextprotocol/server-everything   the reference server, for clawedge's client
#
# Re-running is fast: a stamp naming the versions skips the install.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

sdk=1.32.2
everything=2026.8.31
dest=third_party/mcp
stamp=$dest/.installed-$sdk-$everything

if [ -f "$stamp" ]; then
  exit 0
fi
command -v npm >/dev/null || need_apt npm
mkdir -p "$dest"
step "npm install @modelcontextprotocol/sdk@$sdk @modelcontextprotocol/server-everything@$everything"
# --ignore-scripts: nothing from the registry runs at install time.
(cd "$dest" && [ -f package.json ] || echo '{"private": true}' >package.json)
npm install --silent --no-audit --no-fund --ignore-scripts --prefix "$dest" \
  "@modelcontextprotocol/sdk@$sdk" "@modelcontextprotocol/server-everything@$everything" >/dev/null
touch "$stamp"
