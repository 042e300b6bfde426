#!/usr/bin/env bash
# Telegram channel benchmarks: reply latency (update served by the fake Bot API ->
# sendMessage received), command path and scripted instant provider, store on disk and
# on tmpfs; and the 10,000-update soak with the daemon's RSS.
# Prints a markdown report on stdout (docs/BENCHMARKS.md quotes it).
#
#   ./scripts/bench/telegram.sh                 # 1000 messages per case, 3 runs
#   N=3000 COUNT=5 ./scripts/bench/telegram.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
need_go

echo "## Telegram benchmarks ($(date -u +%Y-%m-%d), $(go env GOVERSION), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "### Reply latency (goal: p95 <= 5 ms)"
echo
echo '```'
go test ./channels/telegram -run '^$' -bench ReplyLatency -benchtime "${N:-1000}x" -count "${COUNT:-3}" | grep Benchmark
echo '```'
echo
echo "Same machine, same moment, the console path for calibration of the disk:"
echo
echo '```'
go test ./cmd/clawedge -run '^$' -bench ConsoleLatency -benchtime 1s -count 1 | grep Benchmark
echo '```'
echo
echo "### Soak: 10,000 updates through the fake Bot API to \`clawedge run\`"
echo
echo '```'
go test ./cmd/clawedge -run '^TestTelegramSoak$' -count 1 -v | grep -E 'VmRSS|--- '
echo '```'
