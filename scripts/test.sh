#!/usr/bin/env bash
# Runs every test of clawedge, installing what they need first. This is the
# README's test command and what CI runs (.ci/run).
#
#   ./scripts/test.sh            everything (about 5 minutes on 2 cores)
#   FUZZTIME=30s ./scripts/test.sh   longer fuzzing of each parser
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib.sh
need_go
need_apt gcc git npm # gcc: the race detector and the llama.cpp binding need cgo; npm: fetch-llama.sh

step "modules"
go mod download
go mod verify >/dev/null
if ! go mod tidy -diff >/dev/null 2>&1; then
  go mod tidy -diff || true
  die "go.mod/go.sum are not tidy: run go mod tidy"
fi

step "format and vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
[ -z "$unformatted" ] || die "not gofmt'ed: $unformatted"
CGO_ENABLED=0 go vet ./...

step "static builds for every board (CGO_ENABLED=0)"
for target in linux/amd64 linux/arm64 linux/arm/6 linux/arm/7; do
  IFS=/ read -r os arch arm <<<"$target"
  CGO_ENABLED=0 GOOS=$os GOARCH=$arch GOARM=$arm go build -o /dev/null ./cmd/clawedge
  echo "  built $target"
done

step "unit, integration and end-to-end tests (race detector on)"
go test -race -count=1 -timeout 20m ./...

step "local model: fetch llama.cpp (pinned, cached) and test the cgo binding"
./scripts/fetch-llama.sh
CGO_ENABLED=1 go vet -tags llamacpp ./localmodel/... ./cmd/clawedge-llm
go test -race -count=1 -tags llamacpp ./localmodel/... ./cmd/clawedge-llm

step "fuzzing each parser of outside input for ${FUZZTIME:-10s}"
go test ./grammar -run '^$' -fuzz '^FuzzParse$' -fuzztime "${FUZZTIME:-10s}"
go test ./config -run '^$' -fuzz '^FuzzParse$' -fuzztime "${FUZZTIME:-10s}"
go test ./channels -run '^$' -fuzz '^FuzzDispatch$' -fuzztime "${FUZZTIME:-10s}"
go test ./tools -run '^$' -fuzz '^FuzzReadSpecs$' -fuzztime "${FUZZTIME:-10s}"

step "benchmarks compile and run once"
go test -run '^$' -bench . -benchtime 1x ./... >/dev/null

echo "all tests passed"
