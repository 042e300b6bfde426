#!/usr/bin/env bash
# Builds the Raspberry Pi SD card image, out/clawedge-rpi.img (see
# image/mkimage): the Pi firmware and kernel from the gokrazy Go modules
# (pinned below, checked against pinned hashes), clawedge-init as PID 1 and
# the arm64 clawedge, and the local-model runner with the C runtime it loads
# (scripts/image-runtime.sh), and the Wi-Fi modules and firmware
# (scripts/image-wifi.sh). Also copies the kernel and Pi 3 B device tree to
# out/qemu/ for the QEMU boot test (scripts/image-test.sh).
#
#   ./scripts/image.sh
#   MODEL=FILE ./scripts/image.sh   also put a GGUF model in models/ on the boot partition
#   UPDATE_PUBKEY=FILE ./scripts/image.sh   trust this update signing key (docs/update.md)
#   RUNNER=none ./scripts/image.sh  leave the local-model runner out (a core-only image)
#   WIFI=none ./scripts/image.sh    leave the Wi-Fi modules and firmware out
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh
need_go
export PATH="$PATH:/usr/sbin:/sbin"
need_tools mkfs.vfat:dosfstools mcopy:mtools mksquashfs:squashfs-tools mkfs.ext4:e2fsprogs

# The Go modules that carry the Pi's boot firmware and kernel are data, not
# code this repo imports: they are fetched here at pinned versions and checked
# against the h1: hashes go.sum would hold (the checksum database may be
# unreachable, so the hashes are pinned in the repo instead).
# To update: pick versions (go list -m -versions is empty for pseudo-versions:
# use go list -m github.com/gokrazy/kernel.rpi@latest), then run this script
# with the new versions and the hashes it reports, after checking them.
FIRMWARE=github.com/gokrazy/firmware@v0.0.0-20260522070551-527ce0ed43cf
FIRMWARE_SUM=h1:WRmvIwhtcWJfHnrfpfXWPh3Xq6Lztn0y5l3li+NjaYw=
KERNEL=github.com/gokrazy/kernel.rpi@v0.0.0-20251127164438-9778ec0261de # Linux 6.12.47-v8
KERNEL_SUM=h1:RSLWj1Ska9s4cl+n/bC5LY4s8vLr+tZoO2vMm/wGP64=

# fetch_module MODULE@VERSION SUM prints the module's directory in the module cache.
fetch_module() {
  local tmp json dir sum
  tmp=$(mktemp -d)
  # A throwaway module, so this repo's go.mod and go.sum are never touched.
  (cd "$tmp" && printf 'module fetch\n\ngo 1.22\n' >go.mod &&
    GOFLAGS=-mod=mod GOSUMDB=off go mod download -json "$1") >"$tmp/out.json" ||
    { cat "$tmp/out.json" >&2; rm -rf "$tmp"; die "cannot download $1"; }
  json=$(cat "$tmp/out.json")
  rm -rf "$tmp"
  dir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$json")
  sum=$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$json")
  [ "$sum" = "$2" ] || die "$1: hash $sum, pinned $2: refusing it"
  [ -d "$dir" ] || die "$1: no directory in the module cache"
  echo "$dir"
}

version=$(release_version)
step "fetching the Pi firmware and kernel (pinned)"
fw=$(fetch_module "$FIRMWARE" "$FIRMWARE_SUM")
kernel=$(fetch_module "$KERNEL" "$KERNEL_SUM")
echo "  $fw"
echo "  $kernel"

step "building clawedge and clawedge-init for linux/arm64"
mkdir -p out/bin out/qemu
build_core arm64 out/bin/clawedge-linux-arm64
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -ldflags "-s -w" -o out/bin/clawedge-init-linux-arm64 ./cmd/clawedge-init

step "writing out/clawedge-rpi.img"
extra=()
if [ "${RUNNER:-}" != none ]; then
  step "staging the local-model runner for linux/arm64 (clawedge-llm, llama.cpp, Debian's C runtime)"
  scripts/image-runtime.sh out/runner-arm64
  extra+=(-runner out/runner-arm64)
fi
if [ "${WIFI:-}" != none ]; then
  step "staging Wi-Fi: the brcmfmac modules and the Pi's firmware (pinned)"
  scripts/image-wifi.sh "$kernel" out/wifi-arm64
  extra+=(-add out/wifi-arm64)
fi
[ -n "${MODEL:-}" ] && extra+=(-model "$MODEL")
# The key update bundles must be signed with (clawedge update keygen; docs/update.md).
[ -n "${UPDATE_PUBKEY:-}" ] && extra+=(-update-pubkey "$UPDATE_PUBKEY")
go run ./image/mkimage -firmware "$fw" -kernel "$kernel" \
  -clawedge out/bin/clawedge-linux-arm64 -init out/bin/clawedge-init-linux-arm64 \
  -config image/config.yaml -version "$version" "${extra[@]}" -o out/clawedge-rpi.img
install -m 0644 "$kernel/vmlinuz" "$kernel/bcm2710-rpi-3-b.dtb" out/qemu/
