#!/usr/bin/env bash
# The local-model runner on arm64, emulated: cross-builds clawedge-llm in the
# release layout (scripts/build-llm.sh arm64: bin/ and lib/, rpath
# $ORIGIN/../lib), runs it under qemu-aarch64-static as a Cortex-A72 (a Pi 4;
# ggml picks its armv8.0 CPU variant), loads the tiny random-weight model and
# generates 8 tokens over the wire protocol, driven by a host-built llmdrive.
# About a minute; CI runs it from scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh
need_go
need_tools qemu-aarch64-static:qemu-user-static aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu \
  aarch64-linux-gnu-g++:g++-aarch64-linux-gnu
sysroot=/usr/aarch64-linux-gnu # libc and libstdc++ for arm64 come with the cross toolchain
[ -e "$sysroot/lib/ld-linux-aarch64.so.1" ] && [ -e "$sysroot/lib/libstdc++.so.6" ] ||
  die "no arm64 libc/libstdc++ in $sysroot (apt-get install g++-aarch64-linux-gnu)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

step "cross-building clawedge-llm for arm64"
scripts/build-llm.sh arm64 "$work/arm64"
go build -o "$work/llmdrive" ./cmd/clawedge-llm/internal/llmdrive
go run ./cmd/clawedge model synth --shape tiny --type q8_0 --out "$work/tiny.gguf" >/dev/null

step "running it under qemu-aarch64-static (cortex-a72): load the tiny model, generate 8 tokens"
export QEMU_CPU=cortex-a72
export CLAWEDGE_LLM_VERBOSE=1 # llama.cpp's log: shown if it fails, and names the CPU variant
"$work/llmdrive" smoke -model "$work/tiny.gguf" -n 8 -threads 1 -timeout 170s -- \
  qemu-aarch64-static -L "$sysroot" "$work/arm64/bin/clawedge-llm" 2>"$work/stderr" || {
  tail -n 40 "$work/stderr" >&2
  die "the arm64 runner failed under QEMU"
}
echo "arm64 runner under QEMU: ok"
