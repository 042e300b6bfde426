#!/usr/bin/env bash
# Builds, once, a Debian "forky" root holding Debian's llama.cpp-tools (llama-server),
# the real server the remote-model tests run clawedge's grammars and schemas against,
# into third_party/llama-server (git-ignored):
#
#   third_party/llama-server/root/          the minbase root (debootstrap), with llama-server
#   third_party/llama-server/cache/         the .debs debootstrap downloaded, kept for a rebuild
#   third_party/llama-server/VERSION        the llama.cpp-tools version in the root
#   ~/.cache/clawedge/llama-server/         a copy for the next clone on this machine
#                                           (CLAWEDGE_CACHE moves it; a week old, rebuilt)
#
# Why a root: the host (bookworm) has no llama.cpp-tools and its glibc is too old for
# forky's. llama-server runs in it with chroot (no mount needed): started with the root's
# own dynamic loader instead, it finds its libraries but not its CPU backends, which ggml
# looks for at the absolute path they were installed at (/usr/lib/x86_64-linux-gnu/ggml).
# cmd/clawedge/llamaserver_test.go starts it so.
#
# What is checked: debootstrap verifies the suite's signed Release file with Debian's
# archive keyring, and every package against the sha256 that file vouches for. forky
# moves, so the version is recorded (VERSION) rather than pinned. Re-running is fast: a
# stamp skips the build while the root's llama-server still starts; the .debs stay cached,
# so a rebuild downloads only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh

dest=third_party/llama-server
root=$dest/root
stamp=$dest/.built
mirror=http://deb.debian.org/debian
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

runs() { [ -x "$root/usr/bin/llama-server" ] && chroot "$root" /usr/bin/llama-server --version >/dev/null 2>&1; }

# A root built on this machine is kept outside the clone too, so that a fresh
# clone (as CI makes) copies it in seconds rather than running debootstrap
# again. It is rebuilt once it is a week old: forky moves.
machine=${CLAWEDGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/clawedge}/llama-server
if [ ! -f "$stamp" ] && [ -f "$machine/.built" ] && [ -n "$(find "$machine/.built" -mtime -7)" ]; then
  echo "copying the llama-server root built on this machine from $machine"
  rm -rf "$root"
  mkdir -p "$dest"
  cp -a "$machine/root" "$root" && cp "$machine/VERSION" "$dest/VERSION" && touch "$stamp"
fi

if [ -f "$stamp" ] && runs; then
  exit 0
fi
[ "$(uname -m)" = x86_64 ] || die "the llama-server root is built for x86_64 hosts only"
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root (run as root, or with sudo)"
need_tools debootstrap:debootstrap
[ -f "$keyring" ] || need_tools gpgv:debian-archive-keyring
# bookworm's debootstrap has no script for forky; sid's is the same suite layout.
script=/usr/share/debootstrap/scripts/sid
[ -f "$script" ] || die "debootstrap has no $script"

step "debootstrap forky with llama.cpp-tools into $root (once; 1-4 min)"
rm -rf "$root" "$stamp"
mkdir -p "$dest/cache"
cache=$(cd "$dest/cache" && pwd)
debootstrap --variant=minbase --include=llama.cpp-tools --keyring="$keyring" --cache-dir="$cache" \
  forky "$root" "$mirror" "$script" >"$dest/debootstrap.log" 2>&1 ||
  { tail -20 "$dest/debootstrap.log" >&2; die "debootstrap failed (log: $dest/debootstrap.log)"; }
runs || die "llama-server in $root does not start"
chroot "$root" dpkg-query -W -f '${Version}\n' llama.cpp-tools >"$dest/VERSION"
touch "$stamp"
# Kept for the next clone (above); written aside and moved, so a copy cut
# short never passes for a whole one.
rm -rf "$machine.new"
mkdir -p "$machine.new"
cp -a "$root" "$machine.new/root" && cp "$dest/VERSION" "$machine.new/VERSION" && touch "$machine.new/.built" &&
  rm -rf "$machine" && mv "$machine.new" "$machine" || echo "warning: the root was not kept in $machine" >&2
echo "llama-server (llama.cpp-tools $(cat "$dest/VERSION")) ready in $root"
