#!/usr/bin/env bash
# Endurance: what the daemon writes to its SD card, and whether anything grows,
# over a long time. Not in the test command (the endurance test there is the
# two-minute version). Prints a markdown report on stdout (docs/BENCHMARKS.md
# quotes it). Talks only to 127.0.0.1; stops by itself.
#
#   ./scripts/bench/soak.sh                       # idle 10m, home load 10m, a month compressed
#   IDLE=2m HOME_LOAD=2m MONTH_MIN=20 ./scripts/bench/soak.sh
#
# 1. Wear at idle and under a typical home load, in real time: 10 automations
#    (one every 6 minutes on average), a sensor read every 10 s, and 50 messages
#    a day (a command every ~29 minutes; here one every 5 minutes to be seen),
#    measured as store commits (each one fsyncs) and bytes written to the disk
#    (/proc/PID/io write_bytes), per hour.
# 2. A month of that load compressed into MONTH_MIN minutes (the month's
#    ~270,000 calls, at the rate that takes): the store file, VmRSS, open files,
#    threads and goroutines sampled as it runs. Flat is the goal.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
need_go
IDLE=${IDLE:-10m}
HOME_LOAD=${HOME_LOAD:-10m}
MONTH_MIN=${MONTH_MIN:-30}
MONTH_MB=${MONTH_MB:-8} # the month's store budget (store.max_mb): a small partition, so retention works during the run
work=$(mktemp -d)
daemon=
trap '[ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
CGO_ENABLED=0 go build -o "$work/clawedge" ./cmd/clawedge
bin=$work/clawedge

secs() { # a Go-style duration of minutes or seconds into seconds
  case $1 in *m) echo $((${1%m} * 60)) ;; *s) echo "${1%s}" ;; *) echo "$1" ;; esac
}
port=$((20000 + RANDOM % 20000))
metric() { # the sum of a metric's samples
  curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 ~ "^"m"(\\{|$)" {s += $2} END {printf "%d\n", s}'
}
start() { # start CONFIG: the daemon on it, waits for its socket
  "$bin" run --config "$1" >"$work/log" 2>&1 &
  daemon=$!
  for _ in $(seq 100); do [ -S "$work/data/clawedge.sock" ] && return; sleep 0.1; done
  die "the daemon did not start: $(cat "$work/log")"
}
stop() { kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=; }
written() { awk '/^write_bytes/ {print $2}' "/proc/$daemon/io"; }

home_config() { # home_config FILE EVERY: the home load, its periods divided by EVERY
  local f=$1 k=$2
  {
    echo "data_dir: $work/data"
    echo "console: {stdin: false}"
    echo "metrics: {listen: \"127.0.0.1:$port\"}"
    echo "automations:"
    for i in $(seq 10); do
      echo "  home$i: {when: {every: $((3600 / k > 0 ? 3600 / k : 1))s}, do: '@gpio/toggle{pin=\"relay\"}'}"
    done
    echo "  sensor: {when: {every: $((10 / k > 0 ? 10 / k : 1))s}, do: '@gpio/read{pin=\"button\"}'}"
  } >"$f"
}

echo "## Endurance ($(date -u +%Y-%m-%d), $(go env GOVERSION), $(nproc) cores; scripts/bench/soak.sh)"
echo
echo "### Wear: store commits and bytes written per hour"
echo
echo "| load | measured over | commits/h | MiB written/h |"
echo "|---|---|---|---|"
printf 'data_dir: %s\nconsole: {stdin: false}\nmetrics: {listen: "127.0.0.1:%s"}\n' "$work/data" "$port" >"$work/idle.yaml"
home_config "$work/home.yaml" 1
phases="idle home"
[ "${SKIP_WEAR:-}" ] && phases=
for phase in $phases; do
  cfg=$work/$phase.yaml
  d=$IDLE
  [ $phase = home ] && d=$HOME_LOAD
  start "$cfg"
  sleep 2
  c0=$(metric clawedge_store_commit_seconds_count)
  w0=$(written)
  t0=$(date +%s)
  end=$((t0 + $(secs "$d")))
  n=0
  while [ "$(date +%s)" -lt "$end" ]; do
    sleep 5
    if [ $phase = home ] && [ $(( ($(date +%s) - t0) % 300 )) -lt 5 ]; then # a message every 5 minutes
      "$bin" exec --config "$cfg" '@gpio/write{pin="led";value=1}' >/dev/null
      n=$((n + 1))
    fi
  done
  c1=$(metric clawedge_store_commit_seconds_count)
  w1=$(written)
  t1=$(date +%s)
  stop
  el=$((t1 - t0))
  printf '| %s | %ss | %d | %.2f |\n' "$phase" "$el" $(((c1 - c0) * 3600 / el)) "$(echo "($w1 - $w0) * 3600 / $el / 1048576" | bc -l)"
done
echo
echo "Home load: 10 automations each toggling a relay once an hour, a sensor read every 10 s (grouped: read-only calls share a commit), a command every 5 minutes."

echo
echo "### A month of the home load in ${MONTH_MIN} minutes"
echo
# The month's calls: 10 automations hourly (7,200), a read every 10 s (259,200),
# 50 messages a day (1,500). An automation runs at most once a second, so the
# month's reads are spread over as many automations reading every second as
# that takes, and its writes over automations toggling every second.
secs_total=$((MONTH_MIN * 60))
readers=$(( (259200 + secs_total - 1) / secs_total ))
writers=$(( (7200 + 1500 + secs_total - 1) / secs_total ))
{
  echo "data_dir: $work/data"
  echo "console: {stdin: false}"
  echo "metrics: {listen: \"127.0.0.1:$port\"}"
  echo "store: {max_mb: $MONTH_MB}"
  echo "automations:"
  for i in $(seq "$readers"); do echo "  read$i: {when: {every: 1s}, do: '@gpio/read{pin=\"button\"}'}"; done
  for i in $(seq "$writers"); do echo "  write$i: {when: {every: 1s}, do: '@gpio/toggle{pin=\"relay\"}'}"; done
} >"$work/month.yaml"
start "$work/month.yaml"
echo "$readers automations reading a pin and $writers toggling a relay, each every second: about the month's 268,000 calls in ${MONTH_MIN} minutes."
echo
echo "| minute | store file KiB | VmRSS KiB | open files | threads | goroutines | audit entries |"
echo "|---|---|---|---|---|---|---|"
for m in $(seq 0 "$MONTH_MIN"); do
  [ "$m" -gt 0 ] && sleep 60
  st=$("$bin" exec --json --config "$work/month.yaml" '@sys/status{}')
  g=$(echo "$st" | grep -o '"goroutines": *[0-9]*' | grep -o '[0-9]*$' || echo "?")
  a=$(echo "$st" | grep -o '"audit_entries": *[0-9]*' | grep -o '[0-9]*$' || echo "?")
  printf '| %d | %d | %d | %d | %d | %s | %s |\n' "$m" $(($(stat -c %s "$work/data/clawedge.db") / 1024)) \
    "$(awk '/^VmRSS/ {print $2}' "/proc/$daemon/status")" "$(ls "/proc/$daemon/fd" | wc -l)" \
    "$(awk '/^Threads/ {print $2}' "/proc/$daemon/status")" "$g" "$a"
done
echo
"$bin" status --config "$work/month.yaml" | grep '^store:' || true
stop
