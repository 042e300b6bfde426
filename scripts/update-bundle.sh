#!/usr/bin/env bash
# Writes out/clawedge-<version>.update, a signed update bundle (docs/update.md),
# from the slot of the SD image scripts/image.sh builds: the root squashfs
# (partition 2) and the slot's boot files (kernel, device trees, overlays).
#
#   UPDATE_KEY=keys/clawedge-update.key ./scripts/update-bundle.sh
#   IMAGE=out/clawedge-rpi.img ...   use an image already built (default: build it)
#   ROOT=FILE ...                    this root squashfs instead of the image's (tests)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh
need_go
need_tools mcopy:mtools
[ -n "${UPDATE_KEY:-}" ] || die "UPDATE_KEY=FILE is required: the private key of 'clawedge update keygen --out DIR'"
[ -f "$UPDATE_KEY" ] || die "UPDATE_KEY=$UPDATE_KEY: no such file"

version=$(release_version)
image=${IMAGE:-}
if [ -z "$image" ]; then
  VERSION=$version ./scripts/image.sh
  image=out/clawedge-rpi.img
fi

step "taking the slot's boot files from $image"
boot=$(mktemp -d)
trap 'rm -rf "$boot"' EXIT
fat="$image@@1M" # partition 1 starts at 1 MiB (image/disk.Plan)
# An A/B image keeps each slot's files in slot-a/ and slot-b/; an older one
# at the top of the partition.
src=::
if mdir -i "$fat" ::slot-a >/dev/null 2>&1; then src=::slot-a/; fi
mcopy -i "$fat" "${src}vmlinuz" "$boot/"
# The firmware loads a gzip'd arm64 kernel as it is: a third of the size,
# so that two slots' kernels fit the boot partition and bundles stay small.
if [ "$(head -c2 "$boot/vmlinuz" | od -An -tx1 | tr -d ' ')" != 1f8b ]; then
  gzip -9n <"$boot/vmlinuz" >"$boot/vmlinuz.gz" && mv "$boot/vmlinuz.gz" "$boot/vmlinuz"
fi
mcopy -i "$fat" "${src}*.dtb" "$boot/"
if mdir -i "$fat" "${src}overlays" >/dev/null 2>&1; then
  mkdir "$boot/overlays"
  mcopy -s -i "$fat" "${src}overlays/*" "$boot/overlays/"
fi

step "writing out/clawedge-$version.update"
mkdir -p out
root=(--image "$image")
[ -n "${ROOT:-}" ] && root=(--root "$ROOT")
go run ./cmd/clawedge update bundle --key "$UPDATE_KEY" --version "$version" --epoch "$(source_epoch)" \
  --board rpi-arm64 "${root[@]}" --boot-dir "$boot" -o "out/clawedge-$version.update"
