#!/usr/bin/env bash
# Builds the local-model runner for a release: scripts/build-llm.sh NAME DIR
# puts clawedge-llm for linux/NAME (amd64 or arm64) in DIR/bin and the
# llama.cpp libraries it loads in DIR/lib: libllama, libggml, libggml-base and
# every per-CPU libggml-cpu-* variant (ggml picks one at run time: armv8.0 on a
# Pi 3/4, armv8.2 on a Pi 5). The runner's rpath is $ORIGIN/../lib (the
# tarball: bin/ and lib/) and $ORIGIN/../lib/clawedge (the .deb: /usr/bin and
# /usr/lib/clawedge); no path of the build machine goes in.
#
# Called by release.sh through build_runner (release-lib.sh). Cross builds
# need a C cross compiler: gcc-aarch64-linux-gnu on amd64 (installed when
# missing), gcc-x86-64-linux-gnu on arm64.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh
need_go

[ $# -eq 2 ] || die "usage: scripts/build-llm.sh amd64|arm64 DIR"
name=$1 dir=$2
host=$(go env GOHOSTARCH)
case $name in
  amd64) goarch=amd64 lib=linux-x64 cross=x86_64-linux-gnu-gcc:gcc-x86-64-linux-gnu ;;
  arm64) goarch=arm64 lib=linux-arm64 cross=aarch64-linux-gnu-gcc:gcc-aarch64-linux-gnu ;;
  *) die "no runner for $name: llama.cpp is built for amd64 and arm64 only" ;;
esac
cc=${CC:-gcc} strip=strip
if [ "$goarch" != "$host" ]; then
  need_tools "$cross" "${cross%%-gcc:*}-g++:g++-${cross#*:gcc-}"
  cc=${cross%%:*} strip=${cross%%-gcc:*}-strip # binutils of the cross compiler
fi
./scripts/fetch-llama.sh

mkdir -p "$dir/bin" "$dir/lib"
# llamarelease leaves out the dev folder's rpath: nothing of this machine's
# paths goes into the binary. PIE: Debian's hardening (lintian hardening-no-pie).
CGO_ENABLED=1 GOOS=linux GOARCH=$goarch CC=$cc \
  go build -trimpath -buildmode=pie -tags llamacpp,llamarelease -ldflags "-s -w" -o "$dir/bin/clawedge-llm" ./cmd/clawedge-llm
src=third_party/llama/$lib/lib
# Only what the runner loads: libllama-common is the Node addon's.
for f in "$src"/libllama.v*.so "$src"/libggml.v*.so "$src"/libggml-base.so "$src"/libggml-cpu-*.so; do
  cp "$f" "$dir/lib/"
done
chmod 0644 "$dir"/lib/*.so
# The npm packages ship them with symbols; --strip-unneeded keeps the dynamic
# ones the loader and ggml's backend loader (dlopen) use.
"$strip" --strip-unneeded "$dir"/lib/*.so

runpath=$(readelf -d "$dir/bin/clawedge-llm" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
[ "$runpath" = '$ORIGIN/../lib:$ORIGIN/../lib/clawedge' ] ||
  die "clawedge-llm has rpath '$runpath', want \$ORIGIN/../lib:\$ORIGIN/../lib/clawedge"
for need in $(readelf -d "$dir/bin/clawedge-llm" "$dir"/lib/lib*.so | sed -n 's/.*(NEEDED).*\[\(lib\(llama\|ggml\)[^]]*\)\]/\1/p' | sort -u); do
  [ -f "$dir/lib/$need" ] || die "$need is needed but not in $dir/lib"
done
size=$(du -sk "$dir/bin/clawedge-llm" "$dir/lib" | awk '{s += $1} END {print s}')
echo "  clawedge-llm for linux/$name in $dir/bin, libraries in $dir/lib ($((size / 1024)) MiB together)"
