#!/usr/bin/env bash
# Side by side with upstream: our runner (clawedge-llm, on the llama.cpp of
# scripts/fetch-llama.sh) against Debian's llama-server (llama.cpp-tools from
# the forky root of scripts/fetch-llama-server.sh), in one run, on the same
# GGUF with the same thread count, batch (512) and context:
#
#   prefill tok/s   a cold prompt of PROMPT tokens, request to first token
#   decode tok/s    GEN tokens greedily (end of generation ignored), first to
#                   last token
#   peak RSS        VmHWM of the process that holds the model
#
# both measured at the client the same way (llmdrive bench and llmdrive
# server); llama-server's own timings are printed beside its figures. The model
# is the Qwen2.5-0.5B shape in Q8_0 with random weights (speed does not depend
# on the weights), synthesized once into $CACHE, as scripts/bench/llm.sh does.
#
#   scripts/bench/upstream.sh                 threads 1
#   THREADS="1 2" ROUNDS=3 scripts/bench/upstream.sh
#
# The engines take turns, ROUNDS times, each round the best of REPS runs after
# a warm-up; the best of all is reported (on a shared machine the best run is
# the least disturbed). llama-server runs in its root with chroot: run as root.
# Results are quoted in docs/BENCHMARKS.md ("Side by side with upstream").
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
need_go

CACHE=${CACHE:-$HOME/.cache/clawedge/bench}
THREADS=${THREADS:-1}
PROMPT=${PROMPT:-256}
GEN=${GEN:-64}
REPS=${REPS:-2}
ROUNDS=${ROUNDS:-2}
CONTEXT=${CONTEXT:-2048}
root=third_party/llama-server/root
mkdir -p "$CACHE"
model=$CACHE/qwen2.5-0.5b-q8_0.gguf

[ "$(id -u)" = 0 ] || die "llama-server runs in $root with chroot: run as root"
./scripts/fetch-llama-server.sh
step "building"
make --no-print-directory runner >/dev/null
go build -o "$CACHE/llmdrive" ./cmd/clawedge-llm/internal/llmdrive
if [ ! -f "$model" ]; then
  go run ./cmd/clawedge model synth --shape qwen2.5-0.5b --type q8_0 --out "$model.tmp" --force
  mv "$model.tmp" "$model"
fi
# The chrooted server sees the model inside its root: a hard link if the cache
# is on the same file system, else a copy.
inroot=$(mktemp -d "$root/tmp/upstream-XXXXXX")
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$inroot"
}
trap cleanup EXIT
ln "$model" "$inroot/model.gguf" 2>/dev/null || cp "$model" "$inroot/model.gguf"
version=$(chroot "$root" dpkg-query -W -f '${Version}' llama.cpp-tools 2>/dev/null || echo "?")

load=$(cut -d' ' -f1-3 /proc/loadavg)
step "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load average $load; llama-server $version"
results=$CACHE/upstream.jsonl
: >"$results"
port=$((20000 + RANDOM % 20000))
for t in $THREADS; do
  chroot "$root" /usr/bin/llama-server -m "/tmp/$(basename "$inroot")/model.gguf" --host 127.0.0.1 --port "$port" \
    -t "$t" -tb "$t" -c "$CONTEXT" -b 512 -ub 512 -np 1 --no-webui >"$CACHE/llama-server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 600); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    kill -0 "$server_pid" 2>/dev/null || { tail -20 "$CACHE/llama-server.log"; die "llama-server did not start"; }
    sleep 0.2
  done
  step "prefill $PROMPT tokens, decode $GEN tokens, $t thread(s): $ROUNDS rounds, each the best of $REPS"
  for _ in $(seq "$ROUNDS"); do
    "$CACHE/llmdrive" bench -model "$model" -threads "$t" -context "$CONTEXT" -prompt "$PROMPT" -gen "$GEN" -reps "$REPS" -- bin/clawedge-llm | tee -a "$results"
    "$CACHE/llmdrive" server -url "http://127.0.0.1:$port" -pid "$server_pid" -threads "$t" -prompt "$PROMPT" -gen "$GEN" -reps "$REPS" | tee -a "$results"
  done
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
done

step "summary (ratio = clawedge-llm / llama-server, best of all rounds)"
python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    b = by.setdefault((r["engine"], r["threads"]), dict(r))
    for f in ("prefill_tps", "decode_tps", "peak_rss_mib", "server_prefill_tps", "server_decode_tps"):
        if f in r: b[f] = max(b[f], r[f])
print("| threads | engine | prefill tok/s | decode tok/s | peak RSS MiB | the server's own timings |")
print("|---|---|---|---|---|---|")
for (e, t), r in sorted(by.items(), key=lambda k: (k[0][1], k[0][0])):
    own = f"prefill {r['server_prefill_tps']:.1f}, decode {r['server_decode_tps']:.1f}" if "server_prefill_tps" in r else ""
    print(f"| {t} | {e} | {r['prefill_tps']:.1f} | {r['decode_tps']:.1f} | {r['peak_rss_mib']:.0f} | {own} |")
print()
for (e, t), r in sorted(by.items(), key=lambda k: k[0][1]):
    s = by.get(("llama-server", t))
    if e == "clawedge-llm" and s:
        print(f"threads {t}: prefill ratio {r['prefill_tps']/s['prefill_tps']:.3f}, decode ratio {r['decode_tps']/s['decode_tps']:.3f}")
PY
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
