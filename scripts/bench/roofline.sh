#!/usr/bin/env bash
# The speed limit of local decoding, measured here and carried to other boards.
#
# Decoding one token reads every weight of the model once, so
#   tokens/s <= memory bandwidth / weight bytes.
# This script measures both sides on this machine, with one thread (the
# runner's decode on a Pi is bound by memory, not by cores):
#
#   bandwidth   a STREAM-style kernel in C: the best of REPS passes summing
#               a 256 MiB array (read only, as decode's weight reads are) and
#               of the triad a[i] = b[i] + s*c[i] (STREAM's own figure)
#   decode      the runner (bin/clawedge-llm) on the Qwen2.5-0.5B shape, Q8_0,
#               random weights: llmdrive bench, 1 thread, 64 tokens
#
# and prints the efficiency, decode tok/s x weight bytes / read bandwidth: the
# share of the limit the runner reaches. docs/local-model.md multiplies each
# Pi's published bandwidth by it. Figures in docs/BENCHMARKS.md.
#
#   scripts/bench/roofline.sh
#   REPS=10 ROUNDS=5 scripts/bench/roofline.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
need_go
need_apt gcc

CACHE=${CACHE:-$HOME/.cache/clawedge/bench}
REPS=${REPS:-5}
mkdir -p "$CACHE"
model=$CACHE/qwen2.5-0.5b-q8_0.gguf

step "building"
make --no-print-directory core runner >/dev/null
go build -o "$CACHE/llmdrive" ./cmd/clawedge-llm/internal/llmdrive
if [ ! -f "$model" ]; then
  bin/clawedge model synth --shape qwen2.5-0.5b --type q8_0 --out "$model.tmp" --force
  mv "$model.tmp" "$model"
fi
cat >"$CACHE/stream.c" <<'C'
/* STREAM-style memory bandwidth, one thread: sum (read only) and triad. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define N (32L * 1024 * 1024) /* doubles: 256 MiB an array, far beyond any cache */
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
int main(int argc, char **argv) {
	int reps = argc > 1 ? atoi(argv[1]) : 5;
	double *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
	if (!a || !b || !c) { fprintf(stderr, "stream: out of memory\n"); return 1; }
	for (long i = 0; i < N; i++) { a[i] = 1; b[i] = 2; c[i] = 0.5; }
	double best_sum = 1e9, best_triad = 1e9, sink = 0;
	const unsigned long long *u = (const unsigned long long *)a;
	for (int r = 0; r < reps; r++) {
		/* An integer sum: the compiler vectorizes it, so memory, not the
		   adder's latency, sets the pace. */
		double t = now();
		unsigned long long s = 0;
		for (long i = 0; i < N; i++) s += u[i];
		t = now() - t; sink += (double)(s & 0xff);
		if (t < best_sum) best_sum = t;
		t = now();
		for (long i = 0; i < N; i++) a[i] = b[i] + 3.0 * c[i];
		t = now() - t;
		if (t < best_triad) best_triad = t;
	}
	printf("{\"read_gbs\": %.3f, \"triad_gbs\": %.3f, \"sink\": %g}\n",
		N * 8 / best_sum / 1e9, 3 * N * 8 / best_triad / 1e9, sink + a[N / 2]);
	return 0;
}
C
gcc -O3 -march=native -o "$CACHE/stream" "$CACHE/stream.c"

load=$(cut -d' ' -f1-3 /proc/loadavg)
step "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), load average $load"
# Bandwidth and decode take turns, ROUNDS times, and the best of each is
# kept: on a shared machine the best run is the least disturbed one.
ROUNDS=${ROUNDS:-3}
bw="" dec=""
for round in $(seq "$ROUNDS"); do
  step "round $round of $ROUNDS: bandwidth (best of $REPS passes over 256 MiB, 1 thread), then decode (0.5B shape, Q8_0, 1 thread, 64 tokens, best of $REPS)"
  b=$("$CACHE/stream" "$REPS")
  d=$("$CACHE/llmdrive" bench -model "$model" -threads 1 -context 512 -prompt 16 -gen 64 -reps "$REPS" -- bin/clawedge-llm)
  echo "  $b"
  echo "  $d"
  bw=$(python3 -c 'import json,sys; a=[json.loads(x) for x in sys.argv[1:] if x]; print(json.dumps(max(a, key=lambda r: r["read_gbs"])))' "$bw" "$b")
  dec=$(python3 -c 'import json,sys; a=[json.loads(x) for x in sys.argv[1:] if x]; print(json.dumps(max(a, key=lambda r: r["decode_tps"])))' "$dec" "$d")
done
offset=$(bin/clawedge model info "$model" | sed -n 's/.*data at byte \([0-9]*\).*/\1/p')
size=$(stat -c %s "$model")

step "roofline"
python3 - "$bw" "$dec" "$size" "$offset" <<'PY'
import json, sys
bw, dec = json.loads(sys.argv[1]), json.loads(sys.argv[2])
weights = int(sys.argv[3]) - int(sys.argv[4])
limit = bw["read_gbs"] * 1e9 / weights
eff = dec["decode_tps"] / limit
print(f"  weight bytes        {weights:,} (the file less its header and vocabulary)")
print(f"  read bandwidth      {bw['read_gbs']:.2f} GB/s (triad {bw['triad_gbs']:.2f} GB/s)")
print(f"  limit               {limit:.1f} tok/s = bandwidth / weight bytes")
print(f"  decode measured     {dec['decode_tps']:.1f} tok/s")
print(f"  efficiency          {eff:.2f} of the limit: expect about {eff:.2f} x bandwidth / weight bytes on another board")
PY
