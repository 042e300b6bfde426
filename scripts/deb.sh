#!/usr/bin/env bash
# Builds the Debian packages for Raspberry Pi OS and Debian:
# out/clawedge_VERSION_ARCH.deb for arm64, armhf (core only, ARMv6: every Pi)
# and amd64, then checks each with dpkg-deb and, if installed, lintian.
#
#   ./scripts/deb.sh                   all three (builds the binaries if needed)
#   ./scripts/deb.sh arm64             one
#   BIN=path OUT=dir ./scripts/deb.sh amd64   package this binary into dir (tests)
#
# Layout: /usr/bin/clawedge, /usr/lib/clawedge/ (runner libraries, when the
# runner is built), /etc/clawedge/config.yaml (conffile), /var/lib/clawedge
# (state, made by postinst and the unit's StateDirectory=), the unit in
# /lib/systemd/system. The maintainer scripts are in packaging/deb/.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh

out=${OUT:-out}
version=$(deb_version "$(release_version)")
epoch=$(source_epoch)
arches=("$@")
[ ${#arches[@]} -gt 0 ] || arches=(arm64 armhf amd64)
mkdir -p "$out"

for arch in "${arches[@]}"; do
  case $arch in
  amd64) name=amd64 driver=sim ;;
  arm64) name=arm64 driver=periph ;;
  armhf) name=armv6 driver=periph ;;
  *) die "unknown Debian architecture $arch (want arm64, armhf or amd64)" ;;
  esac
  step "clawedge_${version}_$arch.deb"
  bin=${BIN:-out/bin/clawedge-linux-$name}
  if [ ! -x "$bin" ]; then
    need_go
    mkdir -p out/bin
    build_core "$name" "$bin"
  fi
  root=$(mktemp -d)
  chmod 0755 "$root"
  trap 'rm -rf "$root"' EXIT
  install -d -m 0755 "$root/DEBIAN" "$root/usr/bin" "$root/etc/clawedge" \
    "$root/lib/systemd/system" "$root/usr/share/doc/clawedge" "$root/usr/share/lintian/overrides"
  install -m 0755 "$bin" "$root/usr/bin/clawedge"
  # The runner slot: scripts/build-llm.sh (see release-lib.sh) fills bin/ and lib/.
  runner=$(mktemp -d)
  [ -n "${BIN:-}" ] || build_runner "$name" "$runner" # BIN: a test's stand-in core only
  depends=adduser overrides=""
  if [ -e "$runner/bin/clawedge-llm" ]; then
    install -m 0755 "$runner/bin/clawedge-llm" "$root/usr/bin/clawedge-llm"
    install -d -m 0755 "$root/usr/lib/clawedge"
    cp -a "$runner/lib/." "$root/usr/lib/clawedge/"
    depends="$depends, $(runner_depends "$root/usr/bin/clawedge-llm" "$root"/usr/lib/clawedge/*.so)"
    overrides="clawedge: no-manual-page [usr/bin/clawedge-llm]" # started by clawedge, not by people
  fi
  rm -rf "$runner"
  sed "s/^  driver: sim$/  driver: $driver/" packaging/config.yaml >"$root/etc/clawedge/config.yaml"
  chmod 0644 "$root/etc/clawedge/config.yaml"
  install -m 0644 packaging/clawedge.service "$root/lib/systemd/system/clawedge.service"
  cat >"$root/usr/share/doc/clawedge/copyright" <<'TXT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: clawedge
Source: https://github.com/clawedge/clawedge

Files: *
Copyright: 2025-2026 the clawedge developers
License: see the source repository
TXT
  printf 'clawedge (%s) stable; urgency=medium\n\n  * Release %s.\n\n -- clawedge developers <clawedge@users.noreply.github.com>  %s\n' \
    "$version" "$version" "$(date -u -R -d "@$epoch")" | gzip -9n >"$root/usr/share/doc/clawedge/changelog.gz"
  # Go binaries are static by design (docs/ARCHITECTURE.md: one static binary), and the CLI's
  # manual is `clawedge --help`.
  cat >"$root/usr/share/lintian/overrides/clawedge" <<'TXT'
clawedge: statically-linked-binary [usr/bin/clawedge]
clawedge: no-manual-page [usr/bin/clawedge]
TXT
  [ -z "$overrides" ] || echo "$overrides" >>"$root/usr/share/lintian/overrides/clawedge"
  chmod 0644 "$root/usr/share/doc/clawedge/"* "$root/usr/share/lintian/overrides/clawedge"
  install -m 0644 packaging/deb/conffiles "$root/DEBIAN/conffiles"
  install -m 0755 packaging/deb/postinst packaging/deb/prerm packaging/deb/postrm "$root/DEBIAN/"
  size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
  sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" -e "s/@DEPENDS@/$depends/" packaging/deb/control.in >"$root/DEBIAN/control"
  (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum >DEBIAN/md5sums)
  chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control"
  find "$root" -exec touch -h -d "@$epoch" {} +
  deb="$out/clawedge_${version}_$arch.deb"
  SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
  rm -rf "$root"
  trap - EXIT
  dpkg-deb --info "$deb" >/dev/null
  dpkg-deb --contents "$deb"
  if command -v lintian >/dev/null && [ -z "${NO_LINTIAN:-}" ]; then
    lintian --fail-on error,warning "$deb"
  fi
  echo "  $deb ($(stat -c %s "$deb") bytes)"
done
