#!/usr/bin/env bash
# Stages the local-model runner for the SD image: scripts/image-runtime.sh DIR
# puts clawedge-llm in DIR/bin, the llama.cpp libraries in DIR/lib (only the
# CPU variants a Pi runs: armv8.0 for the Pi 3, 4 and Zero 2 W, armv8.2 with
# dotprod and fp16 for the Pi 5's Cortex-A76), and in DIR/root the C runtime
# they load, from Debian's arm64 packages pinned in scripts/image-debs.sha256:
# the dynamic loader at /lib/ld-linux-aarch64.so.1 (the runner's ELF
# interpreter) and glibc, libstdc++ and libgcc_s in the multiarch directories
# the loader searches by default; and dosfstools' fsck.fat at /usr/sbin, which
# clawedge-init runs on the boot partition at every boot (it needs only glibc;
# a core-only image, RUNNER=none, boots without the check). Then it checks
# that every library any of them needs is staged, so a missing one fails here
# and not on a board.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
[ $# -eq 1 ] || die "usage: scripts/image-runtime.sh DIR"
dir=$1

rm -rf "$dir"
scripts/build-llm.sh arm64 "$dir" >/dev/null
# Variants no Pi can use (SVE, int8 matmul, SME) or that the Pi 5 outranks.
for f in "$dir"/lib/libggml-cpu-*.so; do
  case ${f##*/} in
    libggml-cpu-armv8.0_1.so | libggml-cpu-armv8.2_2.so) ;;
    *) rm "$f" ;;
  esac
done

mkdir -p "$dir/root"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch_debs scripts/image-debs.sha256 "$tmp/x"
# Only the shared objects: no gconv modules, docs or locales.
ma=aarch64-linux-gnu
mkdir -p "$dir/root/lib/$ma"
for f in ld-linux-aarch64.so.1 libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 libgcc_s.so.1; do
  cp -L "$tmp/x/lib/$ma/$f" "$dir/root/lib/$ma/$f"
done
cp -L "$tmp/x/usr/lib/$ma/libstdc++.so.6" "$dir/root/lib/$ma/libstdc++.so.6"
ln -s "$ma/ld-linux-aarch64.so.1" "$dir/root/lib/ld-linux-aarch64.so.1"
# fsck.fat only: not mkfs.fat, fatlabel, the links or the docs.
install -D -m 0755 "$tmp/x/sbin/fsck.fat" "$dir/root/usr/sbin/fsck.fat"
chmod 0644 "$dir"/root/lib/$ma/*
chmod 0755 "$dir/root/lib/$ma/ld-linux-aarch64.so.1"

for exe in "$dir/bin/clawedge-llm" "$dir/root/usr/sbin/fsck.fat"; do
  interp=$(readelf -l "$exe" | sed -n 's/.*interpreter: \(.*\)\]/\1/p')
  [ -e "$dir/root$interp" ] || die "${exe##*/}'s interpreter $interp is not staged"
done
for need in $(readelf -d "$dir/bin/clawedge-llm" "$dir/root/usr/sbin/fsck.fat" "$dir"/lib/*.so "$dir"/root/lib/$ma/* 2>/dev/null |
  sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u); do
  [ -e "$dir/lib/$need" ] || [ -e "$dir/root/lib/$ma/$need" ] || die "$need is needed but not staged in $dir"
done
size=$(du -sk "$dir" | cut -f1)
echo "  runner for the image in $dir: bin/, lib/ and the C runtime in root/ ($((size / 1024)) MiB)"
