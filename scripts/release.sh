#!/usr/bin/env bash
# Builds the release: the static core for every board and a tarball per
# architecture (bin/, lib/, a commented default config, the systemd unit).
#
#   ./scripts/release.sh                 every target, into out/
#   ./scripts/release.sh arm64 armv6     only these
#   VERSION=v0.2.0 ./scripts/release.sh  stamp this version
#
# Writes out/bin/clawedge-linux-NAME (used by deb.sh and image.sh) and
# out/clawedge-VERSION-linux-NAME.tar.gz.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh
need_go

version=$(release_version)
epoch=$(source_epoch)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(amd64 arm64 armv6 armv7)
mkdir -p out/bin

for name in "${targets[@]}"; do
  step "clawedge $version for linux/$name"
  build_core "$name" "out/bin/clawedge-linux-$name"
  pkg="clawedge-$version-linux-$name"
  stage="out/stage/$pkg"
  rm -rf "$stage"
  mkdir -p "$stage/bin" "$stage/lib"
  cp "out/bin/clawedge-linux-$name" "$stage/bin/clawedge"
  build_runner "$name" "$stage"
  driver=sim
  case $name in arm*) driver=periph ;; esac
  sed "s/^  driver: sim$/  driver: $driver/" packaging/config.yaml >"$stage/config.yaml"
  cp packaging/clawedge.service "$stage/clawedge.service"
  cat >"$stage/lib/README" <<'TXT'
Shared libraries of the local-model runner (clawedge-llm) go here, on amd64
and arm64 builds that include it. The core (bin/clawedge) needs none.
TXT
  tar -C out/stage --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
    -czf "out/$pkg.tar.gz" "$pkg"
  size=$(stat -c %s "out/bin/clawedge-linux-$name")
  awk -v n="$name" -v s="$size" -v p="$pkg" \
    'BEGIN { printf "  out/bin/clawedge-linux-%s: %d bytes (%.2f MiB)\n  out/%s.tar.gz\n", n, s, s / 1048576, p }'
done
