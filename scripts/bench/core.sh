#!/usr/bin/env bash
# Core benchmarks: binary sizes per target, idle RSS of the daemon, and the Go
# benchmarks of the parser, the console path and the audit store.
# Prints a markdown report on stdout (docs/BENCHMARKS.md quotes it).
#
#   ./scripts/bench/core.sh            # default: benchtime 2s, 5 runs each
#   BENCHTIME=1s COUNT=3 ./scripts/bench/core.sh
#   BENCH=none ./scripts/bench/core.sh # the size and RSS goals only
#
# The goals (docs/BENCHMARKS.md, issue 24): the stripped linux/arm64 core <= 16 MB
# (16,000,000 bytes) and VmRSS of the idle daemon <= 16 MB (15,625 KiB); a
# line under each table says PASS or FAIL, and the last line sums them up.
# The exit status stays 0: this is a report.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
need_go
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "## Core benchmarks ($(date -u +%Y-%m-%d), $(go env GOVERSION), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
echo
size_goal=16000000 # bytes: 16 MB (issue 24)
rss_goal=15625     # KiB: 16 MB (issue 24)
verdicts=()
verdict() { # verdict NAME VALUE GOAL UNIT
  local v=PASS
  [ "$2" -le "$3" ] || v=FAIL
  verdicts+=("$1 $v")
  printf '\n**%s: %s** (%s %s against a goal of at most %s %s)\n' "$1" "$v" "$2" "$4" "$3" "$4"
}

echo "### Stripped static binary size (goal: linux/arm64 <= 16 MB)"
echo
echo "| target | bytes | MiB |"
echo "|---|---|---|"
for target in linux/arm64 linux/arm/7 linux/arm/6 linux/amd64; do
  IFS=/ read -r os arch arm <<<"$target"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOARM=$arm go build -trimpath -gcflags "$core_gcflags" -ldflags "-s -w" -o "$work/clawedge" ./cmd/clawedge
  size=$(stat -c %s "$work/clawedge")
  awk -v t="$target" -v s="$size" 'BEGIN { printf "| %s | %d | %.2f |\n", t, s, s / 1048576 }'
  if [ "$target" = linux/arm64 ]; then arm64_size=$size; fi
done
verdict "size of the linux/arm64 core" "$arm64_size" "$size_goal" bytes

echo
echo "### Idle RSS of \`clawedge run\` on the simulated board, every channel on (goal: <= 16 MB)"
echo
CGO_ENABLED=0 go build -trimpath -gcflags "$core_gcflags" -ldflags "-s -w" -o "$work/clawedge" ./cmd/clawedge
# Telegram (its Bot API on a closed local port: the bot retries, as on a board
# without Internet), MQTT to a local Mosquitto, MCP over HTTP, the dashboard
# and the metrics endpoint, all on 127.0.0.1.
port=$((20000 + RANDOM % 20000))
{
  printf 'data_dir: %s/data\n' "$work"
  printf 'telegram:\n  token: "123456789:AAF-bench_token_0123456789abcdefghijk"\n  api_url: http://127.0.0.1:1\n  allow_users: [1]\n'
  printf 'mcp:\n  serve: {listen: "127.0.0.1:%d", token: "mcp-bench-token-0123456789"}\n' $((port + 1))
  printf 'web: {listen: "127.0.0.1:%d"}\nmetrics: {listen: "127.0.0.1:%d"}\n' $((port + 2)) $((port + 3))
  # The A2A server for other boards; DNS-SD stays off: a bench talks to 127.0.0.1 only.
  printf 'boards: {name: bench, listen: "127.0.0.1:%d"}\n' $((port + 4))
} >"$work/clawedge.yaml"
channels="Telegram, MCP, web, metrics, boards (A2A)"
if command -v mosquitto >/dev/null; then
  mosquitto -p "$port" >/dev/null 2>&1 &
  broker=$!
  printf 'mqtt: {broker: "mqtt://127.0.0.1:%d"}\n' "$port" >>"$work/clawedge.yaml"
  channels="$channels, MQTT (Mosquitto)"
  sleep 0.5
fi
trap 'kill ${broker:-} 2>/dev/null; rm -rf "$work"' EXIT
# stdin stays open (a fifo nobody writes) so the stdin console is live, as in a terminal.
mkfifo "$work/in"
"$work/clawedge" run --config "$work/clawedge.yaml" --log-level error <"$work/in" >/dev/null 2>&1 &
pid=$!
exec 3>"$work/in"
sleep 10
echo "Channels on: $channels."
echo
rss=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
hwm=$(awk '/^VmHWM/ {print $2}' /proc/$pid/status)
# Anonymous (heap, stacks, written data) apart from file-backed (the binary's
# pages: how many stay mapped after start, see docs/BENCHMARKS.md).
anon=$(awk '/^RssAnon/ {print $2}' /proc/$pid/status)
file=$(awk '/^RssFile/ {print $2}' /proc/$pid/status)
# A burst of commands, then idle again: RSS must settle, not grow.
for i in $(seq 1 2000); do echo "@gpio/toggle{pin=\"led\"}" >&3; done
sleep 3
rss2=$(awk '/^VmRSS/ {print $2}' /proc/$pid/status)
kill -TERM $pid
exec 3>&-
wait $pid || true
echo "| measure | KiB |"
echo "|---|---|"
echo "| VmRSS after start, idle 10 s | $rss |"
echo "| of which anonymous (RssAnon) / file-backed (RssFile) | $anon / $file |"
echo "| VmHWM (peak) at that point | $hwm |"
echo "| VmRSS after a burst of 2,000 commands, idle 3 s | $rss2 |"
verdict "idle VmRSS of the daemon" "$rss" "$rss_goal" KiB

echo
printf 'Goals: %s.\n' "$(printf '%s; ' "${verdicts[@]}" | sed 's/; $//')"
[ "${BENCH:-all}" = none ] && exit 0

echo
echo "### Go benchmarks (benchtime ${BENCHTIME:-2s}, count ${COUNT:-5}; median of runs shown by benchstat if installed)"
echo
echo '```'
go test -run '^$' -bench . -benchmem -benchtime "${BENCHTIME:-2s}" -count "${COUNT:-5}" \
  ./grammar ./channels ./peripherals ./store ./tools ./cmd/clawedge >"$work/bench.txt"
if command -v benchstat >/dev/null; then
  benchstat "$work/bench.txt"
else
  grep -E '^Benchmark' "$work/bench.txt"
fi
echo '```'
