# Thin wrappers; the scripts are the source of truth (they also work without make).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build run test bench clean
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

clean:
	rm -rf bin out
