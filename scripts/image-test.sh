#!/usr/bin/env bash
# The SD image boot test: builds out/clawedge-rpi.img, boots it in QEMU's
# Raspberry Pi 3 B model (kernel and DTB passed explicitly, the console on the
# emulated mini UART, /dev/ttyS0 in the guest), drives clawedge over that
# console (@gpio/write and @gpio/read on the emulated BCM2835 GPIO controller
# through the periph driver), cuts the power, boots again and checks that the
# audit trail kept the calls; then, as a person would, writes a clawedge.yaml
# naming the tiny model in models/ on the boot partition, boots again and
# sends free text, which the runner on the image answers. Console logs: out/image-test/boot{1,2}.log.
#
#   ./scripts/image-test.sh        (about 2 minutes on 2 cores)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. scripts/release-lib.sh
need_go
need_tools qemu-system-aarch64:qemu-system-arm

t0=$(date +%s)
# The tiny random-weight model, in models/ on the boot partition: the test
# names it in a clawedge.yaml there and the runner on the image loads it.
mkdir -p out/image-model
go run ./cmd/clawedge model synth --shape tiny --type q8_0 --force --out out/image-model/tiny.gguf >/dev/null
MODEL=out/image-model/tiny.gguf ./scripts/image.sh
step "booting it in qemu-system-aarch64 -M raspi3b"
rm -rf out/image-test && mkdir -p out/image-test
CLAWEDGE_IMAGE=$PWD/out/clawedge-rpi.img CLAWEDGE_QEMU_DIR=$PWD/out/qemu CLAWEDGE_IMAGE_LOGS=$PWD/out/image-test \
  timeout 400 go test -count=1 -v -timeout 390s -run '^TestBootInQEMU$' ./image/boottest
echo "image test passed in $(($(date +%s) - t0)) s"
