# Thin wrappers; the scripts are the source of truth (they also work without make).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build run test bench clean release deb image image-test
all: build

build:
	mkdir -p bin
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o bin/clawedge ./cmd/clawedge

run:
	./scripts/run-sim.sh

test:
	./scripts/test.sh

bench:
	./scripts/bench/core.sh

# Cross builds and tarballs per architecture into out/ (scripts/release.sh).
release:
	VERSION=$(VERSION) ./scripts/release.sh

# out/clawedge_<version>_<arch>.deb for arm64, armhf and amd64 (scripts/deb.sh).
deb:
	VERSION=$(VERSION) ./scripts/deb.sh

# out/clawedge-rpi.img, the Raspberry Pi SD card image (scripts/image.sh).
image:
	VERSION=$(VERSION) ./scripts/image.sh

# Builds the image and boots it in qemu-system-aarch64 -M raspi3b (scripts/image-test.sh).
image-test:
	VERSION=$(VERSION) ./scripts/image-test.sh

clean:
	rm -rf bin out
