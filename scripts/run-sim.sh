#!/usr/bin/env bash
# Builds clawedge and starts it on the simulated board, console on this terminal.
# No hardware, no keys, no network needed. Extra arguments go to `clawedge run`.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
need_go
mkdir -p bin
CGO_ENABLED=0 go build -trimpath -gcflags "$core_gcflags" -ldflags "-s -w -X main.version=$(git describe --always --dirty 2>/dev/null || echo dev)" -o bin/clawedge ./cmd/clawedge
echo "bin/clawedge built; type help, pins, or @gpio/write{pin=\"led\";value=1}; Ctrl-C stops." >&2
exec bin/clawedge run "$@"
