#!/usr/bin/env bash
# What the dashboard costs the idle daemon (issue 39: at most 1 MB of VmRSS):
# `clawedge run` on the simulated board with its BME280 (the built-in
# board.sensors, sampled), stdin console live (a fifo), alternating runs
# without and with `web:`; with it, a browser's worth of use before idle
# again: paired (clawedge web pair, POST /api/session), every page loaded,
# /sensors at each range, the sensors' event stream open.
#
#   RUNS=3 ./scripts/bench/web-rss.sh
#
# Prints a markdown table of VmRSS / RssAnon (KiB) at 10 s after start and,
# with the dashboard, 3 s after the pages; the last line is the median
# growth and PASS or FAIL against 1,024 KiB.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
need_go
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -trimpath -gcflags "$core_gcflags" -ldflags "-s -w" -o "$work/clawedge" ./cmd/clawedge
port=$((20000 + RANDOM % 20000))
base=http://127.0.0.1:$port

config() { # config DIR WEB
  printf 'data_dir: %s/data\n' "$1"
  printf 'board:\n  buses: {sensors: {i2c: "1"}}\n'
  printf '  sensors: {greenhouse: {driver: bme280, bus: sensors, address: 0x76, every: 30s, sim: {temperature: 21.5, humidity: 40, pressure: 1013.2}}}\n'
  [ "$2" = off ] || printf 'web: {listen: "127.0.0.1:%d"}\n' "$port"
}
status() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }

# run WEB: one daemon; prints "rss anon [rss2 anon2]".
run() {
  local dir="$work/$1-$RANDOM" pid
  mkdir -p "$dir"
  config "$dir" "$1" >"$dir/c.yaml"
  mkfifo "$dir/in"
  "$work/clawedge" run --config "$dir/c.yaml" --log-level error <"$dir/in" >/dev/null 2>&1 &
  pid=$!
  exec 3>"$dir/in"
  sleep 10
  local out="$(status $pid VmRSS) $(status $pid RssAnon)"
  if [ "$1" = on ]; then
    local code csrf
    code=$("$work/clawedge" web pair --config "$dir/c.yaml" --name bench --role viewer | sed -n 's/^code \([0-9]*\):.*/\1/p')
    csrf=$(curl -s -c "$dir/jar" -H "Origin: $base" -H 'Content-Type: application/json' -d "{\"code\":\"$code\"}" "$base/api/session" | sed 's/.*"csrf":"\([^"]*\)".*/\1/')
    [ -n "$csrf" ] || die "pairing failed"
    for p in / /pins /approvals /automations /audit /models /chat "/sensors?range=1h" "/sensors?range=24h" "/sensors?range=7d" \
      /static/app.js /static/uplot.min.js /static/sensors.js; do
      curl -sf -b "$dir/jar" -o /dev/null "$base$p" || die "GET $p failed"
    done
    curl -s -N -b "$dir/jar" --max-time 5 "$base/api/events?sensors=1" >/dev/null || true
    sleep 3
    out="$out $(status $pid VmRSS) $(status $pid RssAnon)"
  fi
  kill -TERM $pid
  exec 3>&-
  wait $pid || true
  echo "$out"
}

runs=${RUNS:-3}
offs=() ons=() afters=() aoffs=() aons=() aafters=()
echo "| run | web off: VmRSS / RssAnon | web on, idle: VmRSS / RssAnon | web on, after the pages: VmRSS / RssAnon |"
echo "|---|---|---|---|"
for i in $(seq 1 "$runs"); do
  read -r r a <<<"$(run off)"
  read -r r1 a1 r2 a2 <<<"$(run on)"
  offs+=("$r") ons+=("$r1") afters+=("$r2") aoffs+=("$a") aons+=("$a1") aafters+=("$a2")
  echo "| $i | $r / $a | $r1 / $a1 | $r2 / $a2 |"
done
median() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
off=$(median "${offs[@]}") on=$(median "${ons[@]}") after=$(median "${afters[@]}")
aoff=$(median "${aoffs[@]}") aon=$(median "${aons[@]}") aafter=$(median "${aafters[@]}")
echo "| median | $off / $aoff | $on / $aon | $after / $aafter |"
grow=$((on - off))
v=PASS
[ "$grow" -le 1024 ] || v=FAIL
echo
echo "**The idle daemon's VmRSS with the dashboard on: $v** ($grow KiB more than without it, median of $runs runs each; goal: at most 1,024 KiB more). After a browser's use: VmRSS $((after - off)) KiB more, RssAnon $((aafter - aoff)) KiB more."
