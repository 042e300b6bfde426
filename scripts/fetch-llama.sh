#!/usr/bin/env bash
# Fetches the prebuilt llama.cpp the local-model runner links against, from the
# pinned npm packages (MIT), checks their sha256 and unpacks into third_party/llama
# (git-ignored):
#
#   third_party/llama/linux-x64/lib/     libllama, libggml*, per-CPU ggml variants
#   third_party/llama/linux-arm64/lib/   the same for arm64 (armv8.0 .. armv9.2 variants)
#   third_party/llama/include/           llama.h, ggml*.h, gguf.h
#   third_party/llama/models/ggml-vocab-qwen2.gguf   vocabulary-only Qwen2 model
#
# Re-running is fast: packages are cached and a stamp skips the unpacking.
# No 32-bit ARM build exists: armv6/armv7 boards run the core with remote models only.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

version=3.22.1
dest=third_party/llama
cache=$dest/cache
stamp=$dest/.unpacked-$version
sums=scripts/llama-libs.sha256
packages=("@node-llama-cpp/linux-x64@$version" "@node-llama-cpp/linux-arm64@$version" "node-llama-cpp@$version")

if [ -f "$stamp" ] && [ "$stamp" -nt "$sums" ]; then
  exit 0
fi
command -v npm >/dev/null || need_apt npm
command -v git >/dev/null || need_apt git
mkdir -p "$cache"

for pkg in "${packages[@]}"; do
  file=$(echo "$pkg" | sed 's/^@//; s#/#-#; s/@/-/').tgz
  if [ ! -f "$cache/$file" ]; then
    step "npm pack $pkg"
    (cd "$cache" && npm pack --silent "$pkg" >/dev/null)
  fi
  want=$(awk -v f="$file" '$2 == f {print $1}' "$sums")
  [ -n "$want" ] || die "$file has no pinned sum in $sums"
  have=$(sha256sum "$cache/$file" | cut -d' ' -f1)
  if [ "$have" != "$want" ]; then
    rm -f "$cache/$file"
    die "sha256 mismatch for $file: got $have, pinned $want (package changed upstream or download corrupted; removed it)"
  fi
done

step "unpacking llama.cpp $version into $dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for arch in linux-x64 linux-arm64; do
  rm -rf "$dest/$arch"
  mkdir -p "$dest/$arch/lib"
  tar xzf "$cache/node-llama-cpp-$arch-$version.tgz" -C "$tmp" "package/bins/$arch"
  # The Node addon is not ours to load; only the shared libraries are.
  find "$tmp/package/bins/$arch" -name '*.so' -exec cp {} "$dest/$arch/lib/" \;
  # The libraries ask for libllama.so / libggml.so by their unversioned sonames too.
  (cd "$dest/$arch/lib" && for f in lib*.v*.so; do ln -sf "$f" "${f%%.v*}.so"; done)
  rm -rf "$tmp/package"
done

tar xzf "$cache/node-llama-cpp-$version.tgz" -C "$tmp" package/llama/gitRelease.bundle
git clone -q "$tmp/package/llama/gitRelease.bundle" "$tmp/src" 2>/dev/null
rm -rf "$dest/include" "$dest/models"
mkdir -p "$dest/include" "$dest/models"
cp "$tmp/src/include/llama.h" "$tmp/src/ggml/include/"*.h "$dest/include/"
cp "$tmp/src/models/ggml-vocab-qwen2.gguf" "$dest/models/"
git -C "$tmp/src" rev-parse HEAD >"$dest/include/LLAMA_COMMIT"
touch "$stamp"
echo "llama.cpp $version ready in $dest"
