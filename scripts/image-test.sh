#!/usr/bin/env bash
# The SD image boot test: builds out/clawedge-rpi.img, boots it in QEMU's
# Raspberry Pi 3 B model (kernel and DTB passed explicitly, the console on the
# emulated mini UART, /dev/ttyS0 in the guest), drives clawedge over that
# console (@gpio/write and @gpio/read on the emulated BCM2835 GPIO controller
# through the periph driver), cuts the power, boots again and checks that the
# audit trail kept the calls (status there also shows clawedge's RSS and
# "wifi: no radio (wlan0 absent)"); then, as a person would, writes a
# clawedge.yaml naming the tiny model in models/ on the boot partition, with
# agent.tool_choice required, boots again and sends free text: the runner on
# the image makes a constrained gpio/write call, the line reads back what the
# audited call wrote, and an answer follows. Then an update:
# the image answers its owner on a fake Bot API on the host, who sends
# "update URL"; the signed bundle of another version, served by an HTTP
# server on the host, is installed into slot B, tried once through tryboot
# (the test plays the firmware), committed, and survives a power cut
# (TestUpdateInQEMU); one dropped on the boot partition whose clawedge exits
# at start rolls back by itself (TestRollbackInQEMU); a power cut while it is
# written leaves A booting, which repairs the boot partition, says so and
# installs the bundle again (TestPowerCutWhileWritingInQEMU).
# The guest has Ethernet over QEMU's usb-net (DHCP on usb0; the host is
# 10.0.2.2).
# Console logs: out/image-test/boot{1,2,11,12,13,21,22,23,24,25}.log.
# Prints BOOT-TO-READY, CORE-RSS, WEB-PAGE, LOCAL-TURN and LOCAL-SPEED (emulated).
#
#   ./scripts/image-test.sh        (about 4 minutes on 2 cores, the image builds included)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh
need_go
need_tools qemu-system-aarch64:qemu-system-arm fdtput:device-tree-compiler

t0=$(date +%s)
# The tiny random-weight model, in models/ on the boot partition: the test
# names it in a clawedge.yaml there and the runner on the image loads it.
mkdir -p out/image-model
go run ./cmd/clawedge model synth --shape tiny --type q8_0 --force --out out/image-model/tiny.gguf >/dev/null
# An update (docs/update.md): a key made for the test, a v0.0.2 image whose
# slot becomes a signed bundle, then the v0.0.1 image that trusts the key.
# v0.0.2 is served over usb-net, which moves ~200 KiB/s under TCG: its image
# is core-only (no runner, no Wi-Fi) and its bundle carries the root only
# (QEMU is given the kernel; a real update also carries the slot's kernel
# and device trees, as v0.0.3's below does).
rm -rf out/image-test && mkdir -p out/image-test
go run ./cmd/clawedge update keygen --out out/image-test/keys >/dev/null
RUNNER=none WIFI=none VERSION=v0.0.2 ./scripts/image.sh
go run ./cmd/clawedge update bundle --key out/image-test/keys/clawedge-update.key --version v0.0.2 \
  --epoch "$(source_epoch)" --board rpi-arm64 --image out/clawedge-rpi.img -o out/clawedge-v0.0.2.update
# v0.0.3: that slot with a clawedge that exits at start, which must roll back.
broken=out/image-test/broken
mkdir -p $broken
dd if=out/clawedge-rpi.img of=$broken/slot.sq bs=1M skip=97 count=32 status=none # slot A (image/disk.Plan)
unsquashfs -q -n -d $broken/root $broken/slot.sq
CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -o $broken/root/usr/bin/clawedge ./image/boottest/testdata/exit1
echo v0.0.3 >$broken/root/etc/clawedge/version
mksquashfs $broken/root $broken/root.squashfs -noappend -all-root -comp gzip -quiet -no-progress
ROOT=$broken/root.squashfs IMAGE=out/clawedge-rpi.img VERSION=v0.0.3 UPDATE_KEY=out/image-test/keys/clawedge-update.key ./scripts/update-bundle.sh
VERSION=v0.0.1 UPDATE_PUBKEY=out/image-test/keys/clawedge-update.pub MODEL=out/image-model/tiny.gguf ./scripts/image.sh
step "booting it in qemu-system-aarch64 -M raspi3b"
CLAWEDGE_IMAGE=$PWD/out/clawedge-rpi.img CLAWEDGE_QEMU_DIR=$PWD/out/qemu CLAWEDGE_IMAGE_LOGS=$PWD/out/image-test \
  CLAWEDGE_UPDATE_BUNDLE=$PWD/out/clawedge-v0.0.2.update CLAWEDGE_BROKEN_BUNDLE=$PWD/out/clawedge-v0.0.3.update \
  timeout 800 go test -count=1 -v -timeout 790s -run '^(TestBootInQEMU|TestUpdateInQEMU|TestRollbackInQEMU|TestPowerCutWhileWritingInQEMU)$' ./image/boottest
echo "image test passed in $(($(date +%s) - t0)) s"
