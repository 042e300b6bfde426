#!/usr/bin/env bash
# Stages Wi-Fi for the SD image: scripts/image-wifi.sh KERNEL_DIR DIR puts in
# DIR (laid over the root file system by image/mkimage -add) the brcmfmac
# kernel modules of the pinned gokrazy kernel (cfg80211 is built in; brcmfmac,
# brcmutil and the vendor modules brcmfmac-wcc/-cyw are modules), under
# /lib/modules/RELEASE as the kernel's modules.dep names them, and the Pi's
# SDIO Wi-Fi firmware and nvram files from Debian's firmware-brcm80211, pinned
# in scripts/image-firmware.sha256, under /lib/firmware/{brcm,cypress}.
# clawedge-init loads the modules at boot (cmd/clawedge-init/modules.go).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
[ $# -eq 2 ] || die "usage: scripts/image-wifi.sh KERNEL_DIR DIR"
kernel=$1 dir=$2

rm -rf "$dir"
rel=$(ls "$kernel/lib/modules")
[ "$(wc -w <<<"$rel")" = 1 ] || die "$kernel/lib/modules: want one kernel release, have: $rel"
src=$kernel/lib/modules/$rel
mods=$dir/lib/modules/$rel
mkdir -p "$mods"
# The modules and their dependencies, as modules.dep lists them.
for m in brcmutil brcmfmac brcmfmac-wcc brcmfmac-cyw; do
  line=$(grep "/$m\.ko:" "$src/modules.dep") || die "$m.ko is not in $src/modules.dep"
  for f in ${line/:/}; do
    install -D -m 0644 "$src/$f" "$mods/$f"
  done
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch_debs scripts/image-firmware.sha256 "$tmp/x"
fw=$tmp/x/usr/lib/firmware
mkdir -p "$dir/lib/firmware/brcm" "$dir/lib/firmware/cypress"
# Only the chips Pis carry: 43430 (Pi 3 B, Zero W, Zero 2 W) and 43455
# (Pi 3 B+, 3 A+, 4, 400, 5): the firmware, its regulatory blob and the
# Raspberry Pi nvram files (symbolic links kept as they are).
for f in "$fw"/brcm/brcmfmac43430-sdio.* "$fw"/brcm/brcmfmac43455-sdio.*; do
  case ${f##*/} in
    *.bin | *.clm_blob | *raspberrypi* | *"Raspberry Pi"*) cp -P "$f" "$dir/lib/firmware/brcm/" ;;
  esac
done
cp -P "$fw"/cypress/cyfmac43430-sdio.* "$fw"/cypress/cyfmac43455-sdio.* "$dir/lib/firmware/cypress/"
# Every link must land on a staged file.
find "$dir/lib/firmware" -type l | while read -r l; do
  [ -e "$l" ] || die "firmware link ${l#"$dir"} -> $(readlink "$l") points at nothing staged"
done
size=$(du -sk "$dir" | cut -f1)
echo "  Wi-Fi for the image in $dir: $(find "$mods" -name '*.ko' | wc -l) modules, $(find "$dir/lib/firmware" -type f | wc -l) firmware files ($((size / 1024)) MiB)"
