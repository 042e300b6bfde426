# Thin wrappers; the scripts are the source of truth (they also work without make).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
LDFLAGS := -s -w -X main.version=$(VERSION) -X main.sourceEpoch=$(EPOCH)
# Nothing in the core is inlined (scripts/lib.sh, core_gcflags).
GCFLAGS := all=-l
# scripts/lib.sh is bash; its need_go and need_apt check for Go and install
# what a fresh Debian lacks (gcc for the runner's cgo), as the test command does.
SHELL := /bin/bash
NEED := . scripts/lib.sh && need_go
export PATH := $(PATH):/usr/local/go/bin:$(HOME)/go/bin

.PHONY: all build core runner run test bench bench-llm bench-grammar clean release deb image image-test update-bundle
all: build

# bin/clawedge (static, no cgo) and bin/clawedge-llm, the local-model runner
# (cgo, llama.cpp from scripts/fetch-llama.sh; it finds the libraries through
# its rpath: ../lib beside it when installed, third_party/llama here).
build: core runner

core:
	@$(NEED)
	mkdir -p bin
	CGO_ENABLED=0 go build -trimpath -gcflags "$(GCFLAGS)" -ldflags "$(LDFLAGS)" -o bin/clawedge ./cmd/clawedge

runner:
	@$(NEED) && need_apt gcc
	./scripts/fetch-llama.sh
	mkdir -p bin
	CGO_ENABLED=1 go build -trimpath -tags llamacpp -ldflags "-s -w" -o bin/clawedge-llm ./cmd/clawedge-llm

run:
	./scripts/run-sim.sh

test:
	./scripts/test.sh

bench:
	./scripts/bench/core.sh

# Our runner vs node-llama-cpp on the Qwen2.5-0.5B shape (scripts/bench/llm.sh).
bench-llm:
	./scripts/bench/llm.sh

# Token masks vs llama.cpp's GBNF sampler, constrained vs free decode (scripts/bench/grammar.sh).
bench-grammar:
	./scripts/bench/grammar.sh

# Cross builds and tarballs per architecture into out/ (scripts/release.sh).
release:
	VERSION=$(VERSION) ./scripts/release.sh

# out/clawedge_<version>_<arch>.deb for arm64, armhf and amd64 (scripts/deb.sh).
deb:
	VERSION=$(VERSION) ./scripts/deb.sh

# out/clawedge-rpi.img, the Raspberry Pi SD card image (scripts/image.sh).
image:
	VERSION=$(VERSION) UPDATE_PUBKEY=$(UPDATE_PUBKEY) ./scripts/image.sh

# out/clawedge-<version>.update, the image's slot signed with UPDATE_KEY
# (clawedge update keygen; docs/update.md; scripts/update-bundle.sh).
update-bundle:
	VERSION=$(VERSION) UPDATE_KEY=$(UPDATE_KEY) ./scripts/update-bundle.sh

# Builds the image and boots it in qemu-system-aarch64 -M raspi3b (scripts/image-test.sh).
image-test:
	VERSION=$(VERSION) ./scripts/image-test.sh

clean:
	rm -rf bin out
